package render

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/deployctl/deployctl/internal/atomicfile"
)

// Write replaces dir with exactly the tree and its Marker, all or nothing:
// the files go to a fresh sibling folder first, which then takes dir's
// place. It replaces only a folder it wrote (see inspect); anything else
// is a *atomicfile.RefusedError and nothing is changed. On any other error
// dir is left as it was. notes say what it recovered from an interrupted
// run.
func (t Tree) Write(dir string, o WriteOptions) (notes []string, err error) {
	if _, ok := t[Marker]; ok {
		return nil, fmt.Errorf("internal: the tree holds %s, the writer's own file", Marker)
	}
	if err := listable(t.Paths()); err != nil {
		return nil, err
	}
	defer lock(existingAncestor(filepath.Dir(filepath.Clean(dir))))()
	tg, err := t.inspect(dir, o, true)
	if err != nil {
		return nil, err
	}
	dir = tg.dir
	if tg.restore != "" {
		if err := os.Rename(tg.restore, dir); err != nil {
			return nil, err
		}
		notes = append(notes, fmt.Sprintf("%s was missing after an interrupted run: put back from %s", dir, tg.restore))
	}
	for _, d := range tg.debris {
		if err := removeOwned(d); err != nil {
			return notes, fmt.Errorf("removing %s, left by an interrupted run: %w", d, err)
		}
		notes = append(notes, "removed "+d+", left by an interrupted run")
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return notes, err
	}
	tmp, err := os.MkdirTemp(parent, debrisPrefix(dir))
	if err != nil {
		return notes, err
	}
	defer func() {
		if _, err := os.Lstat(tmp); err == nil {
			_ = removeOwned(tmp)
		}
	}()
	// The marker first: an interrupted run's folder is then recognisable,
	// and what it holds is listed.
	if err := os.WriteFile(filepath.Join(tmp, Marker), markerFile(o.Platform, t.Paths()), 0o644); err != nil {
		return notes, err
	}
	for _, p := range t.Paths() {
		full := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return notes, err
		}
		if err := os.WriteFile(full, t[p], 0o644); err != nil {
			return notes, err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return notes, err
	}
	if !tg.exists {
		return notes, rename(tmp, dir)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		// Nothing moved: a bind mount, say, that inspect could not see.
		return notes, &atomicfile.RefusedError{Path: dir, Reason: "cannot be moved aside (" + err.Error() + ")", Advice: advice}
	}
	if err := rename(tmp, dir); err != nil {
		if rerr := os.Rename(old, dir); rerr != nil {
			return notes, fmt.Errorf("%w; the previous tree is in %s (the next run puts it back)", err, old)
		}
		return notes, err
	}
	return notes, removeTree(old, tg.prev)
}

func rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("replacing %s: %w", to, err)
	}
	return nil
}
