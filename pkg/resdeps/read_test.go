package resdeps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Every problem of every file in one error, each at its file and line.
func TestReadDirErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"stray.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"a/bad.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  name: d\n",
		"a/nokind.yml":     "---\n# comment\n---\napiVersion: v1\nmetadata: {name: c}\n",
		"b/list.json":      `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Secret"}, 3]}`,
		"b/syntax.yaml":    "apiVersion: v1\nkind: [\n",
		"b/tmpl.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n",
		"c/README.md":      "not read",
		"c/.hidden/x.yaml": "not: read",
		"c/scalar.yaml":    "just a string\n",
		"d/nested/ok.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
	})
	_, err := ReadDir(dir)
	if err == nil {
		t.Fatal("no error")
	}
	msg := strings.ReplaceAll(err.Error(), dir+"/", "")
	for _, want := range []string{
		"stray.yaml: not in an app folder",
		`a/bad.yaml:5: mapping key "name" already defined at line 4`,
		"a/nokind.yml:4: no kind: not a Kubernetes object",
		"b/list.json:1: items[0]: Secret: no metadata.name",
		"b/list.json:1: items[1]: want a Kubernetes object",
		"b/syntax.yaml:2: YAML:",
		"b/tmpl.yaml:1: invalid map key",
		"at line 4: render it first",
		"c/scalar.yaml:1: want a Kubernetes object",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "hidden") || strings.Contains(msg, "README") || strings.Contains(msg, "d/nested") {
		t.Errorf("read what it should not:\n%s", msg)
	}
}

func TestReadDirEmpty(t *testing.T) {
	if _, err := ReadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no app folders") {
		t.Errorf("err = %v", err)
	}
	if _, err := ReadDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing folder read")
	}
}

// A linked app folder (DIR/app → ../rendered/app) is read like a folder.
func TestReadDirSymlink(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"rendered/web/m.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
	if err := os.MkdirAll(filepath.Join(dir, "inv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "rendered", "web"), filepath.Join(dir, "inv", "web")); err != nil {
		t.Fatal(err)
	}
	apps, err := ReadDir(filepath.Join(dir, "inv"))
	if err != nil || len(apps) != 1 || apps[0].Name != "web" || len(apps[0].Objects) != 1 {
		t.Fatalf("%v %+v", err, apps)
	}
}

// Issue 22: an app's manifests made of YAML aliases (650 KB expanded to
// 686 MB) are refused at the alias, before anything expands them.
func TestReadDirAliasBomb(t *testing.T) {
	start := time.Now()
	_, err := ReadDir("testdata/alias-bomb")
	if err == nil || !strings.HasPrefix(err.Error(), "testdata/alias-bomb/web/configmap.yaml:12: YAML: alias expansion exceeds") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}
