package atomicfile

import (
	"errors"
	"io/fs"
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
