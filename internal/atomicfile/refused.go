package atomicfile

import (
	"errors"
	"io/fs"

	"github.com/deployctl/deployctl/internal/readlimit"
)

// RefusedError says why a writer would not touch a path, and what to do
// instead. Nothing was changed. Commands exit 3 on it.
type RefusedError struct {
	Path   string
	Reason string
	Advice string
}

func (e *RefusedError) Error() string {
	s := e.Path + ": " + e.Reason
	if e.Advice != "" {
		s += "; " + e.Advice
	}
	return s
}

// IsRefused reports whether err is (or wraps) a *RefusedError.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// Kind names what a file mode is, for messages: "a folder", "a device"…
// (readlimit's words: a reader and a writer refuse a path alike).
func Kind(m fs.FileMode) string { return readlimit.Kind(m) }
