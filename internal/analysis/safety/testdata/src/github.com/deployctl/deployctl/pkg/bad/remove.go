package bad

import (
	"os"
	"path/filepath"
	"time"
)

func removes(dir string) {
	_ = os.RemoveAll(dir)           // want `os.RemoveAll removes or renames a path: use internal/atomicfile or pkg/render`
	_ = os.Rename(dir, dir+".old")  // want `os.Rename removes or renames a path`
	_, _ = time.ParseDuration("1h") // want `time.ParseDuration parses a duration without overflow or receiver checks: use internal/duration`

	// Not the pattern.
	_ = os.Remove(filepath.Join(dir, "x"))
	_ = 3 * time.Second
}
