package render

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := (Tree{"a/x.yaml": []byte("1"), "stale.yaml": []byte("old")}).Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := (Tree{"a/x.yaml": []byte("2")}).Write(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/x.yaml")); string(b) != "2" {
		t.Errorf("a/x.yaml = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale.yaml")); !os.IsNotExist(err) {
		t.Errorf("stale file survived: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".out.new-*"))
	if len(left) != 0 {
		t.Errorf("temporary directories left: %v", left)
	}
}

func TestAddRefusesOverwrite(t *testing.T) {
	tr := Tree{}
	if err := tr.Add("a", nil); err != nil {
		t.Fatal(err)
	}
	if err := tr.Add("a", nil); err == nil {
		t.Error("second Add of the same path succeeded")
	}
}
