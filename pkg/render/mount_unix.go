//go:build unix

package render

import (
	"os"
	"path/filepath"
	"syscall"
)

// mountPoint reports whether dir is on another device than its parent:
// rename(2) cannot move a mount point (EBUSY), so it cannot be replaced.
func mountPoint(dir string) bool {
	a, errA := os.Stat(dir)
	b, errB := os.Stat(filepath.Dir(real(dir)))
	if errA != nil || errB != nil {
		return false
	}
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev != sb.Dev
}
