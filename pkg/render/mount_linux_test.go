package render

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/deployctl/deployctl/internal/fssnap"
)

// mount mounts (a bind mount of src, or a fresh tmpfs when src is "") on
// target for the test, or skips it where mounting is not permitted.
func mount(t *testing.T, src, target string) {
	t.Helper()
	var err error
	if src == "" {
		err = syscall.Mount("tmpfs", target, "tmpfs", 0, "size=1m")
	} else {
		err = syscall.Mount(src, target, "", syscall.MS_BIND, "")
	}
	if err == syscall.EPERM || err == syscall.EACCES {
		t.Skipf("mounting is not permitted here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(target, syscall.MNT_DETACH); err != nil {
			t.Error(err)
		}
	})
}

// A filesystem mounted inside the output folder, at any depth, on a folder
// generate wrote: the write is refused before anything is touched, naming
// the mount point; the mounted files survive; nothing is left beside.
// Both kinds: a bind mount of the same filesystem (same device: only
// mountinfo shows it) and another filesystem (another device).
func TestWriteRefusesMountInside(t *testing.T) {
	for _, c := range []struct{ name, why string }{
		{"bind", "which is a mount point (a bind mount)"},
		{"tmpfs", "which is a mount point (another filesystem)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "out")
			tr := Tree{"apps/deep/x.yaml": []byte("1"), "b.yaml": []byte("2")}
			write(t, dir, tr)
			point := filepath.Join(dir, "apps", "deep")
			precious := filepath.Join(t.TempDir(), "precious")
			must(t, os.Mkdir(precious, 0o755))
			must(t, os.WriteFile(filepath.Join(precious, "x.yaml"), []byte("user data"), 0o644))
			if c.name == "bind" {
				mount(t, precious, point)
			} else {
				mount(t, "", point)
				must(t, os.WriteFile(filepath.Join(point, "x.yaml"), []byte("user data"), 0o644))
			}
			mounted := fssnap.Take(t, point)

			refused(t, root, dir, tr, dir+": holds "+point+", "+c.why)
			fssnap.Same(t, mounted, fssnap.Take(t, point))
			if b, err := os.ReadFile(filepath.Join(point, "x.yaml")); err != nil || string(b) != "user data" {
				t.Errorf("mounted file: %q, %v", b, err)
			}
			if got := strings.Join(ls(t, root), " "); got != "out" {
				t.Errorf("left beside: %s", got)
			}
		})
	}
}

// A bind mount of a single file is a mount point too.
func TestWriteRefusesFileMountInside(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	tr := Tree{"a/x.yaml": []byte("1")}
	write(t, dir, tr)
	src := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(src, []byte("user data"), 0o644))
	point := filepath.Join(dir, "a", "x.yaml")
	mount(t, src, point)
	refused(t, root, dir, tr, "holds "+point+", which is a mount point (a bind mount)")
	if b, _ := os.ReadFile(src); string(b) != "user data" {
		t.Errorf("mounted file: %q", b)
	}
}

// Debris holding a mount (a run killed between its renames, then a mount
// made in the tree it moved aside) is never descended into: the write is
// refused, the mounted files survive.
func TestWriteNeverRemovesDebrisHoldingAMount(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	tr := Tree{"a/x.yaml": []byte("1")}
	write(t, dir, tr)
	aside := filepath.Join(root, ".out.new-3.old")
	write(t, aside, tr)
	precious := t.TempDir()
	must(t, os.WriteFile(filepath.Join(precious, "data"), []byte("user data"), 0o644))
	point := filepath.Join(aside, "a")
	mount(t, precious, point)
	refused(t, root, dir, tr, aside+", left by an interrupted run, holds "+point+", which is a mount point")
	if b, _ := os.ReadFile(filepath.Join(precious, "data")); string(b) != "user data" {
		t.Errorf("mounted file: %q", b)
	}
	// removeOwned itself refuses it too, whoever calls it.
	if err := removeOwned(aside); err == nil || !strings.Contains(err.Error(), point) {
		t.Errorf("removeOwned: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(precious, "data")); string(b) != "user data" {
		t.Errorf("mounted file after removeOwned: %q", b)
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/a\040b\011c\134d\012`); got != "/a b\tc\\d\n" {
		t.Errorf("%q", got)
	}
}
