// Package readlimit owns io.ReadAll and os.ReadFile, and nothing else.
package readlimit

import (
	"compress/gzip"
	"io"
	"os"
)

func All(r io.Reader) ([]byte, error) { return io.ReadAll(io.LimitReader(r, 10)) }

func Gunzip(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }

func File(name string) ([]byte, error) { return os.ReadFile(name) }

func Remove(dir string) error {
	return os.RemoveAll(dir) // want `os.RemoveAll removes or renames a path`
}
