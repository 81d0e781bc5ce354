// Package atomicfile writes a file so readers see either the old content or
// the whole new one, never a half-written file, and replaces only a file
// of its own: never a symbolic link, a device, a folder, or a file someone
// else wrote.
package atomicfile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write writes data to path through a temporary file in the same folder,
// then renames it into place (mode 0644). The folder must exist.
//
// mark is how the writer recognises its own files: the first bytes every
// file of its kind starts with (a header comment, a JSON object's first
// member). data must start with it. An existing path is replaced only when
// it is a regular file that starts with mark, or is empty; anything else
// is a *RefusedError and nothing is changed. Temporary files an
// interrupted earlier write left behind (.NAME.new-N) are removed.
func Write(path string, data []byte, mark string) error {
	if mark == "" || !bytes.HasPrefix(data, []byte(mark)) {
		return fmt.Errorf("internal: writing %s: the content does not start with its mark %q", path, mark)
	}
	if err := Check(path, mark); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeDebris(dir, base, mark)
	tmp, err := os.CreateTemp(dir, debrisPrefix(base)+"*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Check says whether Write may write path, changing nothing: nil when path
// does not exist in an existing folder, or is a file of this writer's.
func Check(path, mark string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return &RefusedError{Path: path, Reason: "its folder " + dir + " does not exist", Advice: "create it first, or choose another path"}
	} else if !fi.IsDir() {
		return &RefusedError{Path: path, Reason: dir + " is " + Kind(fi.Mode()) + ", not a folder", Advice: "choose another path"}
	}
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &RefusedError{Path: path, Reason: "is " + Kind(fi.Mode()) + ", not a file this command wrote", Advice: "it is never replaced: choose another path"}
	}
	if fi.Size() == 0 {
		return nil // nothing to lose
	}
	if !StartsWith(path, mark) {
		return &RefusedError{Path: path, Reason: fmt.Sprintf("exists and was not written by this command (it does not start with %q)", firstLine(mark)), Advice: "it is never replaced: choose another path, or remove the file yourself"}
	}
	return nil
}

// StartsWith reports whether the file at path starts with mark, reading
// only as much of it as mark is long.
func StartsWith(path, mark string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(mark))
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	return string(head) == mark
}

func debrisPrefix(base string) string { return "." + base + ".new-" }

// removeDebris removes the temporary files of interrupted writes of base:
// regular files named .BASE.new-N that are empty or start with mark. A
// failure to remove one is not this write's failure.
func removeDebris(dir, base, mark string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), debrisPrefix(base)) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && (fi.Size() == 0 || StartsWith(p, mark)) {
			_ = os.Remove(p)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
