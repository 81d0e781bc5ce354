// Package readlimit reads inputs through a bounded reader, so a careless or
// hostile input (a 10 GB dump, a decompression bomb) is refused with the
// limit it broke instead of growing the process until the machine gives
// out, and a file that is not one (a named pipe, /dev/zero) is refused
// instead of blocking or being read forever.
// The limits are part of the documented contract (README, "Limits").
package readlimit

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Documented input limits.
const (
	Spec    int64 = 16 << 20 // a platform spec, --waves, environment.yaml, reports read back
	Import  int64 = 64 << 20 // one import input: a file, a folder's total, stdin
	Secret  int64 = 1 << 20  // a credential file: token, CA, kubeconfig
	Message int64 = 1 << 20  // a response body read from an API

	// NodeStatus bounds a Workflow's node status gunzipped from
	// status.compressedNodes. A status Argo can store lives in an object
	// etcd caps at 1.5 MiB, so its compressedNodes (base64 of gzip) is
	// under 1.5 MiB; deployctl's node JSON decompresses 12.4-12.9 times
	// that base64 (the 750- and 1,000-app Workflows of issue 24: about
	// 6.7 KB of node JSON per app, 0.52 KB compressed), so a status etcd
	// stores is under about 20 MiB of JSON. 64 MiB leaves room for node
	// JSON that compresses three times better than ours: about 10,000
	// apps, far past the about 3,000 whose compressed nodes fit in etcd at
	// all. A gzip bomb stops there.
	NodeStatus int64 = 64 << 20
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
// It is the entry for streams: standard input (`import -`), a response
// body, a decompressing reader (bounding it bounds the bytes after
// decompression, whatever the ratio). A path is read with ReadFile.
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

// NewReader is r bounded for a reader that consumes it as a stream (a
// JSON decoder over a decompressing reader, which never holds the whole
// input): after limit bytes, one byte more fails the read with a
// *TooLargeError instead of returning it.
func NewReader(r io.Reader, name string, limit int64) io.Reader {
	return &limited{r: io.LimitReader(r, limit+1), name: name, limit: limit}
}

// Gunzip is the gzip stream r decompressed, bounded like NewReader: the
// one way this module decompresses (a small input can inflate a
// thousandfold). name says what it is in errors.
func Gunzip(r io.Reader, name string, limit int64) (io.Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return NewReader(zr, name, limit), nil
}

type limited struct {
	r     io.Reader
	name  string
	limit int64
	n     int64
	err   error // once over the limit, every read says so
}

func (l *limited) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	if l.n+int64(n) > l.limit {
		n = int(l.limit - l.n)
		l.n = l.limit
		l.err = &TooLargeError{Name: l.name, Limit: l.limit}
		return n, l.err
	}
	l.n += int64(n)
	return n, err
}

// NotRegularError says a file was expected and path is something else: a
// named pipe (opening it for reading waits for a writer, forever), a
// device (/dev/zero never ends), a socket or a folder.
type NotRegularError struct {
	Name string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.Name, Kind(e.Mode))
}

// IsNotRegular reports whether err is (or wraps) a NotRegularError.
func IsNotRegular(err error) bool {
	var n *NotRegularError
	return errors.As(err, &n)
}

// Kind names what a file mode is, for messages: "a folder", "a device"…
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// ReadFile reads the regular file at path (symbolic links followed) up to
// limit bytes: the one way a file is read. Anything else is a
// *NotRegularError, found without blocking: the type is checked before
// opening (opening a named pipe waits for a writer), the file is opened
// non-blocking, and checked again on the open file, so a pipe swapped in
// between is refused too. A file over the limit is refused from its size
// before anything is read, and the read is bounded as well (a file that
// grows while read).
//
// Standard input and pipes a user names on purpose are streams: ReadAll.
func ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Name: path, Mode: fi.Mode()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Name: path, Mode: fi.Mode()}
	}
	if fi.Size() > limit {
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
	if IsTooLarge(err) || IsNotRegular(err) {
		return err.Error() // already "PATH: larger than the N MiB limit" / "PATH: not a regular file (…)"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("%s: %v", path, err)
}
