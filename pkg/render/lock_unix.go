//go:build unix

package render

import (
	"os"
	"syscall"
)

// lock takes an exclusive flock on folder dir, waiting for another
// generate writing beside it: without it, a second run would take the
// first one's temporary folder for an interrupted run's and remove it.
// The lock is on the folder itself, so it leaves no file behind; where
// flock is not supported (some network file systems) it is skipped.
func lock(dir string) (unlock func()) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing releases the lock
}
