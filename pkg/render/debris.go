package render

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// An interrupted Write leaves, beside DIR: .DIR.new-N, the new tree being
// written (empty or with its marker, written first), and between its two
// renames .DIR.new-N.old, the previous tree moved aside, with DIR missing.
// The next Write puts .old back in DIR's place if DIR is missing, and
// removes the rest. Only folders that are ours are touched: named so, real
// folders, empty or holding a marker (removeOwned deletes it last, so a
// removal cut short leaves the folder recognisable).

func debrisPrefix(dir string) string { return "." + filepath.Base(dir) + ".new-" }

// findDebris lists dir's debris: the temporary trees, and the trees moved
// aside (.old).
func findDebris(dir string) (news, olds []string, err error) {
	parent := filepath.Dir(dir)
	entries, err := os.ReadDir(parent)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, debrisPrefix(dir)) || !e.IsDir() {
			continue
		}
		p := filepath.Join(parent, name)
		if !ours(p) {
			continue
		}
		if strings.HasSuffix(name, ".old") {
			olds = append(olds, p)
		} else {
			news = append(news, p)
		}
	}
	return news, olds, nil
}

// ours: a real folder, empty or holding a marker that is a regular file.
func ours(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	if m, err := os.Lstat(filepath.Join(p, Marker)); err == nil {
		return m.Mode().IsRegular()
	}
	entries, err := os.ReadDir(p)
	return err == nil && len(entries) == 0
}

// newestMarker picks the tree to restore when several were moved aside
// (runs interrupted one after the other): the one marked last.
func newestMarker(olds []string) string {
	best, bestT := olds[0], time.Time{}
	for _, o := range olds {
		if fi, err := os.Stat(filepath.Join(o, Marker)); err == nil && fi.ModTime().After(bestT) {
			best, bestT = o, fi.ModTime()
		}
	}
	return best
}
