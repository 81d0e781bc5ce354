package render

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/deployctl/deployctl/internal/atomicfile"
)

// A tree of ours holds only what its marker lists: regular files, and the
// folders above them. Write replaces such a tree and removes debris only
// after walking all of it: anything else — a mount point at any depth (a
// bind mount of the same filesystem too, which has the same device), a
// symbolic link, a device, a FIFO, a file or folder the marker does not
// list — is refused before anything is touched, and a removal never
// descends into a mount or deletes what is not listed.

// owner judges the entries of one tree: root, its device, the files its
// marker lists (nil: a tree from before markers listed files, or one
// without a marker, where any regular file or folder counts as ours) and
// the mount points of the system.
type owner struct {
	root   string
	real   string // root, links resolved: mountinfo's paths are
	dev    uint64
	hasDev bool
	files  map[string]bool
	dirs   map[string]bool
	mounts map[string]bool
}

func newOwner(root string, files map[string]bool) (*owner, error) {
	fi, err := os.Lstat(root)
	if err != nil {
		return nil, err
	}
	o := &owner{root: root, real: real(root), files: files, mounts: mountPoints()}
	o.dev, o.hasDev = device(fi)
	if files != nil {
		o.dirs = map[string]bool{}
		for f := range files {
			for d := filepath.Dir(filepath.FromSlash(f)); d != "."; d = filepath.Dir(d) {
				o.dirs[filepath.ToSlash(d)] = true
			}
		}
	}
	return o, nil
}

// ownerOf is the owner of a tree of ours, from its marker.
func ownerOf(root string) (*owner, error) {
	m, err := readMarker(root)
	files := m.files
	switch {
	case errors.Is(err, errNoPlatform):
		// A marker cut short by a kill while it was written: it is written
		// before any file, so nothing else in the folder is ours.
		files = map[string]bool{}
	case err != nil:
		return nil, &atomicfile.RefusedError{Path: filepath.Join(root, Marker), Reason: "is not a marker generate wrote (" + err.Error() + ")", Advice: advice}
	case !m.found:
		files = map[string]bool{} // an empty folder of ours: nothing in it is
	}
	return newOwner(root, files)
}

// foreign says why the entry at rel (slash-separated, below root) is not
// ours, or "".
func (o *owner) foreign(rel string, fi os.FileInfo) string {
	// The walk follows no link, so the entry's real path is root's and rel.
	if dev, ok := device(fi); ok && o.hasDev && dev != o.dev {
		return "is a mount point (another filesystem)"
	}
	if o.mounts[filepath.Join(o.real, filepath.FromSlash(rel))] {
		return "is a mount point (a bind mount)"
	}
	switch {
	case rel == Marker && fi.Mode().IsRegular():
		return ""
	case fi.IsDir():
		if o.dirs != nil && !o.dirs[rel] {
			return "is a folder generate did not write"
		}
	case fi.Mode().IsRegular():
		if o.files != nil && !o.files[rel] {
			return "is a file generate did not write"
		}
	default:
		return "is " + atomicfile.Kind(fi.Mode()) + ", which generate never writes"
	}
	return ""
}

// check walks the whole tree, following no link, and says why it is not
// ours at its first entry that is not, or "".
func (o *owner) check() (string, error) {
	problem := ""
	err := o.walk("", func(rel string, fi os.FileInfo) error {
		if why := o.foreign(rel, fi); why != "" {
			problem = "holds " + filepath.Join(o.root, filepath.FromSlash(rel)) + ", which " + why
			return errStop
		}
		return nil
	})
	if err == errStop {
		err = nil
	}
	return problem, err
}

var errStop = errors.New("stop")

func (o *owner) refuse(rel, why string) error {
	return &atomicfile.RefusedError{Path: filepath.Join(o.root, filepath.FromSlash(rel)), Reason: why + ", which generate did not write: it is not removed",
		Advice: "move it out of " + o.root + " (or unmount it), then remove " + o.root + " yourself or run again"}
}

// walk calls fn on every entry below root (rel), a folder's entries before
// the folder itself, and descends only into real folders on root's device.
func (o *owner) walk(rel string, fn func(rel string, fi os.FileInfo) error) error {
	dir := filepath.Join(o.root, filepath.FromSlash(rel))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		r := e.Name()
		if rel != "" {
			r = rel + "/" + r
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		if fi.IsDir() && o.foreign(r, fi) == "" {
			if err := o.walk(r, fn); err != nil {
				return err
			}
		}
		if err := fn(r, fi); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the tree, which check found ours: every entry is judged
// again just before it goes (the tree may have changed since), nothing is
// removed through a link or below a mount, and the marker goes last, so
// a removal cut short leaves the folder recognisably ours.
func (o *owner) remove() error {
	err := o.walk("", func(rel string, fi os.FileInfo) error {
		if rel == Marker {
			return nil
		}
		if why := o.foreign(rel, fi); why != "" {
			return o.refuse(rel, why)
		}
		return os.Remove(filepath.Join(o.root, filepath.FromSlash(rel)))
	})
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(o.root, Marker)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.Remove(o.root)
}

// removeOwned removes a tree of ours (its marker says what is ours), its
// marker last; anything else in it stops the removal before it starts.
func removeOwned(dir string) error {
	o, err := ownerOf(dir)
	if err != nil {
		return err
	}
	return removeChecked(dir, o)
}

// removeTree removes a tree whose marker said m when it was judged ours.
func removeTree(dir string, m markerInfo) error {
	o, err := newOwner(dir, m.files)
	if err != nil {
		return err
	}
	return removeChecked(dir, o)
}

func removeChecked(dir string, o *owner) error {
	if problem, err := o.check(); err != nil || problem != "" {
		if err == nil {
			err = &atomicfile.RefusedError{Path: dir, Reason: problem, Advice: "it is not removed: move that out (or unmount it), then run again"}
		}
		return err
	}
	return o.remove()
}

// listable refuses a tree path the marker's one-path-a-line list cannot
// hold.
func listable(paths []string) error {
	for _, p := range paths {
		if p == "" || strings.ContainsAny(p, "\n\r") || strings.HasPrefix(p, "/") {
			return fmt.Errorf("internal: tree path %q cannot be listed in the marker", p)
		}
	}
	return nil
}
