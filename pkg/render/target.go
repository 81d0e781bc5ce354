package render

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/internal/atomicfile"
)

// WriteOptions say whose tree is written and what must survive it.
type WriteOptions struct {
	// Platform is named in the marker; a folder marked for another
	// platform is never replaced.
	Platform string
	// Keep are files the run reads (the spec): a folder holding one of
	// them is never replaced.
	Keep []string
}

// advice ends every refusal of an output folder.
const advice = "generate replaces its output folder as a whole, so -o must be a new or empty folder, or one generate wrote for this platform (the default is generated/<platform>); nothing was changed"

// target is what Write found at the output folder, and what it will do.
type target struct {
	dir     string
	exists  bool     // dir (or the tree restore brings back) is there
	restore string   // a tree an interrupted run left moved aside, to put back first
	debris  []string // temporary folders of interrupted runs, to remove
	// prev is what the replaced tree's marker lists (files nil: a tree
	// from before markers listed files): the removal of the tree moved
	// aside removes only that.
	prev markerInfo
}

// CheckOutput refuses an output folder whatever the tree: a file, a link,
// a device, the current folder or one above it, a folder holding one of
// keep, a mount point. It changes nothing; generate calls it even when the
// spec does not load, so every problem is reported in one pass. Write
// checks this and more (the marker).
func CheckOutput(dir string, keep []string) error {
	_, err := Tree(nil).inspect(dir, WriteOptions{Keep: keep}, false)
	return err
}

// inspect decides what Write may do with dir, touching nothing. full adds
// the checks that need the tree and its platform: the marker.
func (t Tree) inspect(dir string, o WriteOptions, full bool) (*target, error) {
	dir = filepath.Clean(dir)
	tg := &target{dir: dir}
	refuse := func(problems ...string) error {
		return &atomicfile.RefusedError{Path: dir, Reason: strings.Join(problems, "; "), Advice: advice}
	}
	if err := checkAncestors(filepath.Dir(dir)); err != nil {
		return nil, refuse(err.Error())
	}
	news, olds, err := findDebris(dir)
	if err != nil {
		return nil, err
	}
	tg.debris = append(news, olds...)
	if full {
		// Debris is removed before the write: it must be ours through and
		// through before anything is touched.
		for _, d := range tg.debris {
			if p, err := treeProblem(d, nil); err != nil {
				return nil, err
			} else if p != "" {
				return nil, refuse(d + ", left by an interrupted run, " + p)
			}
		}
	}
	cur := dir // the folder to judge: dir, or the tree to restore
	fi, err := os.Lstat(dir)
	switch {
	case os.IsNotExist(err) && len(olds) > 0:
		tg.restore = newestMarker(olds)
		tg.debris = without(tg.debris, tg.restore)
		cur = tg.restore
	case os.IsNotExist(err):
		return tg, nil
	case err != nil:
		return nil, err
	case fi.Mode()&os.ModeSymlink != 0:
		to, _ := os.Readlink(dir)
		return nil, refuse(fmt.Sprintf("is a symbolic link (to %s), not a folder: give the folder itself, or another path", to))
	case !fi.IsDir():
		return nil, refuse("is " + atomicfile.Kind(fi.Mode()) + ", not a folder")
	}
	tg.exists = true
	var problems []string
	if p := holdsCurrent(cur); p != "" {
		problems = append(problems, p)
	}
	for _, k := range o.Keep {
		if inside(cur, k) {
			problems = append(problems, "holds the spec "+k+", which replacing the folder would delete")
		}
	}
	if mountPoint(cur) {
		problems = append(problems, "is a mount point, which cannot be replaced: write into a folder below it")
	}
	if full {
		if p, m, err := t.owned(cur, o.Platform); err != nil {
			return nil, err
		} else if p != "" {
			problems = append(problems, p)
		} else {
			tg.prev = m
		}
	}
	if len(problems) > 0 {
		return nil, refuse(problems...)
	}
	return tg, nil
}

// owned says why cur is not a tree generate may replace, or "": a tree
// holding its marker for the platform (every entry one the marker lists),
// or one written before the marker existed (legacyTree), or empty.
func (t Tree) owned(cur, platform string) (string, markerInfo, error) {
	entries, err := os.ReadDir(cur)
	if err != nil || len(entries) == 0 {
		return "", markerInfo{files: map[string]bool{}}, err
	}
	m, err := readMarker(cur)
	switch {
	case err != nil:
		return "holds a " + Marker + " generate did not write (" + err.Error() + ")", m, nil
	case m.found && m.platform != platform:
		return fmt.Sprintf("holds the tree of platform %q, not %q: if that platform is gone (renamed), remove the folder yourself", m.platform, platform), m, nil
	case m.found:
		p, err := treeProblem(cur, &m)
		return p, m, err
	case t.legacyTree(cur, entries):
		p, err := treeProblem(cur, &m)
		return p, m, err
	}
	names := make([]string, 0, 4)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	return fmt.Sprintf("is not empty (%s) and holds no %s: generate did not write it", strings.Join(names, ", "), Marker), m, nil
}

// treeProblem walks a tree of ours (m: its marker, read if nil) and says
// why it holds something generate did not write, or "". A marker from
// before markers listed files, and a tree from before markers, are trusted
// for regular files and folders only.
func treeProblem(dir string, m *markerInfo) (string, error) {
	var o *owner
	var err error
	if m == nil {
		o, err = ownerOf(dir)
	} else {
		o, err = newOwner(dir, m.files)
	}
	if err != nil {
		if r, ok := err.(*atomicfile.RefusedError); ok {
			return "holds " + r.Path + ", which " + r.Reason, nil
		}
		return "", err
	}
	return o.check()
}

// checkAncestors requires the nearest existing ancestor of dir to be a
// folder, so MkdirAll cannot fail half-way on a file.
func checkAncestors(dir string) error {
	a := existingAncestor(dir)
	if fi, err := os.Stat(a); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a folder", a, atomicfile.Kind(fi.Mode()))
	}
	return nil
}

// existingAncestor is dir, or its nearest ancestor that exists.
func existingAncestor(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			return dir
		}
		dir = filepath.Dir(dir)
	}
}

// holdsCurrent refuses the current folder and every folder above it.
func holdsCurrent(dir string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	switch {
	case same(dir, wd):
		return "is the current folder"
	case inside(dir, wd):
		return "holds the current folder"
	}
	return ""
}

// real resolves p to an absolute path without symbolic links.
func real(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

func same(a, b string) bool { return real(a) == real(b) }

// inside reports whether path is below dir, links resolved.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(real(dir), real(path))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
