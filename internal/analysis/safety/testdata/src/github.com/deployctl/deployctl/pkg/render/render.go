// Package render owns os.RemoveAll and os.Rename (with atomicfile).
package render

import "os"

func Replace(dir string) error {
	if err := os.Rename(dir, dir+".old"); err != nil {
		return err
	}
	return os.RemoveAll(dir + ".old")
}
