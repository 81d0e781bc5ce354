// Package atomicfile owns os.Rename (with render).
package atomicfile

import "os"

func Write(name string) error { return os.Rename(name+".tmp", name) }
