// Package fssnap records a file tree — every entry's type, mode, size,
// modification time, content hash and link target, links not followed —
// so tests can prove a refused write changed nothing.
package fssnap

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/deployctl/deployctl/internal/readlimit"
)

// Take records root (a file, link, device or folder) and everything under it.
func Take(t testing.TB, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(p)
			v += " -> " + to
		case fi.Mode().IsRegular():
			data, err := readlimit.ReadFile(p, readlimit.Import)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		snap[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// Same fails t with every difference between two snapshots.
func Same(t testing.TB, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for p, v := range before {
		if w, ok := after[p]; !ok {
			diffs = append(diffs, "removed "+p)
		} else if w != v {
			diffs = append(diffs, fmt.Sprintf("changed %s: %s → %s", p, v, w))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("the tree changed:\n  %s", strings.Join(diffs, "\n  "))
	}
}

// Device makes a character device node (1, 3: what /dev/null is) at p, for
// tests of writers handed a device. Only root can; false otherwise.
func Device(t testing.TB, p string) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 0x103); err != nil {
		t.Fatal(err)
	}
	return true
}
