// Package readlimit reads inputs through a bounded reader, so a careless or
// hostile input (a spec named /dev/zero, a 10 GB dump) is refused with the
// limit it broke instead of growing the process until the machine gives out.
// The limits are part of the documented contract (README, "Limits").
package readlimit

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Documented input limits.
const (
	Spec    int64 = 16 << 20 // a platform spec, --waves, environment.yaml, reports read back
	Import  int64 = 64 << 20 // one import input: a file, a folder's total, stdin
	Secret  int64 = 1 << 20  // a credential file: token, CA, kubeconfig
	Message int64 = 1 << 20  // a response body read from an API
)

// TooLargeError says which input broke which limit.
type TooLargeError struct {
	Name  string // file path or "standard input"
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than the %s limit", e.Name, Human(e.Limit))
}

// IsTooLarge reports whether err is (or wraps) a TooLargeError.
func IsTooLarge(err error) bool {
	var t *TooLargeError
	return errors.As(err, &t)
}

// ReadAll reads r up to limit bytes; one byte more is a *TooLargeError.
func ReadAll(r io.Reader, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: name, Limit: limit}
	}
	return data, nil
}

// ReadFile reads path up to limit bytes. A regular file over the limit is
// refused from its size before anything is read; devices and pipes are read
// through the bounded reader.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, &TooLargeError{Name: path, Limit: limit}
	}
	return ReadAll(f, path, limit)
}

// Human prints a limit as "16 MiB".
func Human(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Problem is the problem of a file that could not be read, after its path:
// the limit it broke, or the reason without the "open PATH:" prefix.
func Problem(path string, err error) string {
	if IsTooLarge(err) {
		return err.Error() // already "PATH: larger than the N MiB limit"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("%s: %v", path, err)
}
