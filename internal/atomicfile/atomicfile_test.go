package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deployctl/deployctl/internal/fssnap"
)

const mark = "# written by the test writer\n"

func TestWriteCreatesAndReplacesItsOwn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.txt")
	for _, body := range []string{"one\n", "two\n"} {
		if err := Write(p, []byte(mark+body), mark); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != mark+"two\n" {
		t.Errorf("content %q", b)
	}
	// An empty file holds nothing to lose.
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte(mark), mark); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRefuses(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, f func(p string) error) string {
		p := filepath.Join(dir, name)
		if err := f(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	foreign := mk("notes.txt", func(p string) error { return os.WriteFile(p, []byte("my notes\n"), 0o600) })
	short := mk("short.txt", func(p string) error { return os.WriteFile(p, []byte("#"), 0o600) })
	folder := mk("folder", func(p string) error { return os.Mkdir(p, 0o755) })
	toFile := mk("to-file", func(p string) error { return os.Symlink(foreign, p) })
	toOurs := mk("to-ours", func(p string) error {
		if err := os.WriteFile(p+".target", []byte(mark), 0o644); err != nil {
			return err
		}
		return os.Symlink(p+".target", p)
	})
	cases := map[string]string{
		foreign:                            foreign + `: exists and was not written by this command (it does not start with "# written by the test writer"); it is never replaced: choose another path, or remove the file yourself`,
		short:                              short + `: exists and was not written by this command (it does not start with "# written by the test writer"); it is never replaced: choose another path, or remove the file yourself`,
		folder:                             folder + ": is a folder, not a file this command wrote; it is never replaced: choose another path",
		toFile:                             toFile + ": is a symbolic link, not a file this command wrote; it is never replaced: choose another path",
		toOurs:                             toOurs + ": is a symbolic link, not a file this command wrote; it is never replaced: choose another path",
		filepath.Join(dir, "missing", "x"): filepath.Join(dir, "missing", "x") + ": its folder " + filepath.Join(dir, "missing") + " does not exist; create it first, or choose another path",
		filepath.Join(foreign, "x"):        filepath.Join(foreign, "x") + ": " + foreign + " is a regular file, not a folder; choose another path",
	}
	if dev := filepath.Join(dir, "null"); fssnap.Device(t, dev) {
		cases[dev] = dev + ": is a device, not a file this command wrote; it is never replaced: choose another path"
	}
	before := fssnap.Take(t, dir)
	for p, want := range cases {
		err := Write(p, []byte(mark+"new\n"), mark)
		if err == nil || err.Error() != want || !IsRefused(err) {
			t.Errorf("%s:\n got %v\nwant %s", p, err, want)
		}
	}
	fssnap.Same(t, before, fssnap.Take(t, dir))
}

func TestWriteRemovesDebrisOfInterruptedWrites(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	for name, body := range map[string]string{".report.json.new-1": mark + "half", ".report.json.new-2": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Not ours: another file's, or not starting with the mark.
	for name, body := range map[string]string{".report.json.new-3": "user data", ".other.new-1": mark} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(p, []byte(mark), mark); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := len(names); got != 3 || names[0] != ".other.new-1" || names[1] != ".report.json.new-3" || names[2] != "report.json" {
		t.Errorf("left: %v", names)
	}
}

func TestWriteWantsDataWithItsMark(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x")
	if err := Write(p, []byte("no mark"), mark); err == nil || IsRefused(err) {
		t.Errorf("err %v", err)
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("written: %v", err)
	}
}
