package bad

import . "os"

func dotted() {
	_, _ = ReadFile("x") // want `os.ReadFile reads without a bound`
}
