package bad

import "os"

func allowed(dir string) {
	_ = os.RemoveAll(dir) //safety:allow remove dir is the temporary folder this function made

	//safety:allow read the file is embedded in the binary at build time
	_, _ = os.ReadFile(dir)

	// want +1 `//safety:allow read needs a reason`
	//safety:allow read
	_, _ = os.ReadFile(dir) // want `os.ReadFile reads without a bound`

	// want +1 `//safety:allow needs a pattern`
	//safety:allow everything because
	_, _ = os.ReadFile(dir) // want `os.ReadFile reads without a bound`

	// want +1 `//safety:allow remove allows nothing on this line or the next`
	//safety:allow remove a reason, but for the wrong pattern
	_, _ = os.ReadFile(dir) // want `os.ReadFile reads without a bound`

	// want +1 `//safety:allow read allows nothing`
	//safety:allow read too far: two lines above

	_, _ = os.ReadFile(dir) // want `os.ReadFile reads without a bound`

	//safety:allowed is not the directive, so it is only a comment
	_ = dir
}
