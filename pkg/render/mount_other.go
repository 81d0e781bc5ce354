//go:build !unix

package render

import "os"

// mountPoint: only checked where the device of a file is known.
func mountPoint(string) bool { return false }

func device(os.FileInfo) (uint64, bool) { return 0, false }

func mountPoints() map[string]bool { return nil }
