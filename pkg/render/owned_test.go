package render

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/deployctl/deployctl/internal/atomicfile"
	"github.com/deployctl/deployctl/internal/fssnap"
)

// refused runs Write on dir and requires a refusal naming want, with
// nothing under root changed and no temporary folder left.
func refused(t *testing.T, root, dir string, tr Tree, want string) {
	t.Helper()
	before := fssnap.Take(t, root)
	_, err := tr.Write(dir, mine)
	if !atomicfile.IsRefused(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v\nwant a refusal naming %s", err, want)
	}
	fssnap.Same(t, before, fssnap.Take(t, root))
}

// Anything in a tree of ours that generate did not write — a link, a
// FIFO, a device, a file or folder the marker does not list — makes Write
// refuse the whole tree before touching it, and names the entry.
func TestWriteRefusesForeignEntries(t *testing.T) {
	tr := Tree{"a/x.yaml": []byte("1"), "b.yaml": []byte("2")}
	for _, c := range []struct {
		name string
		add  func(t *testing.T, dir string) string // the entry added
		why  string
		skip bool
	}{
		{"a file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a", "notes.txt")
			must(t, os.WriteFile(p, []byte("mine"), 0o644))
			return p
		}, "which is a file generate did not write", false},
		{"a folder", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "keep")
			must(t, os.Mkdir(p, 0o755))
			return p
		}, "which is a folder generate did not write", false},
		{"a link", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a", "x.yaml")
			must(t, os.Remove(p))
			must(t, os.Symlink("/etc/hostname", p))
			return p
		}, "which is a symbolic link, which generate never writes", false},
		{"a link to a folder", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a")
			must(t, os.RemoveAll(p))
			must(t, os.Symlink(t.TempDir(), p))
			return p
		}, "which is a symbolic link, which generate never writes", false},
		{"a FIFO", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "b.yaml")
			must(t, os.Remove(p))
			must(t, syscall.Mkfifo(p, 0o644))
			return p
		}, "which is a named pipe, which generate never writes", false},
		{"a device", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "a", "null")
			if !fssnap.Device(t, p) {
				t.Skip("mknod needs root")
			}
			return p
		}, "which is a device, which generate never writes", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "out")
			write(t, dir, tr)
			p := c.add(t, dir)
			refused(t, root, dir, tr, dir+": holds "+p+", "+c.why)
			if got := ls(t, root); len(got) != 1 {
				t.Errorf("left beside: %v", got)
			}
		})
	}
}

// A marker written before markers listed files is trusted for regular
// files and folders, never for anything else.
func TestWriteOldMarkerTrustsOnlyFilesAndFolders(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	must(t, os.MkdirAll(filepath.Join(dir, "a"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, Marker), []byte("# old\nplatform: p\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "a", "old.yaml"), nil, 0o644))
	link := filepath.Join(dir, "a", "l")
	must(t, os.Symlink("/", link))
	tr := Tree{"a/x.yaml": []byte("1")}
	refused(t, root, dir, tr, "holds "+link+", which is a symbolic link")
	must(t, os.Remove(link))
	write(t, dir, tr)
	if got := strings.Join(ls(t, filepath.Join(dir, "a")), " "); got != "x.yaml" {
		t.Errorf("a: %s", got)
	}
}

// Debris of an interrupted run is removed only when it is ours through and
// through: a foreign file in it stops the write before anything changes.
func TestWriteRefusesForeignDebris(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	write(t, dir, Tree{"a.yaml": []byte("1")})
	aside := filepath.Join(root, ".out.new-9.old")
	write(t, aside, Tree{"b.yaml": nil})
	p := filepath.Join(aside, "yours.txt")
	must(t, os.WriteFile(p, []byte("x"), 0o644))
	refused(t, root, dir, Tree{"a.yaml": []byte("2")}, aside+", left by an interrupted run, holds "+p+", which is a file generate did not write")
}

// A run killed while writing its marker (the first file of its folder)
// leaves the marker cut short: the next run removes that folder, and
// nothing else.
func TestWriteRemovesDebrisWithAMarkerCutShort(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	write(t, dir, Tree{"a.yaml": []byte("1")})
	half := filepath.Join(root, ".out.new-4")
	must(t, os.Mkdir(half, 0o755))
	full := markerFile("p", []string{"a.yaml"})
	must(t, os.WriteFile(filepath.Join(half, Marker), full[:len(full)-12], 0o644))
	notes := write(t, dir, Tree{"a.yaml": []byte("2")})
	if len(notes) != 1 || notes[0] != "removed "+half+", left by an interrupted run" {
		t.Errorf("notes %q", notes)
	}
	// Cut short, it vouches for nothing but itself.
	must(t, os.Mkdir(half, 0o755))
	must(t, os.WriteFile(filepath.Join(half, Marker), full[:len(full)-12], 0o644))
	must(t, os.WriteFile(filepath.Join(half, "a.yaml"), nil, 0o644))
	refused(t, root, dir, Tree{"a.yaml": []byte("3")}, "holds "+filepath.Join(half, "a.yaml")+", which is a file generate did not write")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
