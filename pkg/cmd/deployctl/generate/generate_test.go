package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/internal/fssnap"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/render"
)

const example = "../../../../examples/minimal.yaml"

func run(args ...string) (string, string, error) {
	cmd := NewCommand()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// workspace is a temporary folder holding a copy of the minimal spec.
func workspace(t *testing.T) (root, spec string) {
	t.Helper()
	root = t.TempDir()
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	spec = filepath.Join(root, "minimal.yaml")
	if err := os.WriteFile(spec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return root, spec
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

const advice = "generate replaces its output folder as a whole, so -o must be a new or empty folder, or one generate wrote for this platform (the default is generated/<platform>); nothing was changed"

// Each class of output a careless or hostile -o names: exit 3 with the
// exact reason, and not one byte or timestamp changed.
func TestGenerateRefusesOutputsItDidNotWrite(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, root, spec string) (out string)
		want  string // %s is the output path, %r the workspace
	}{
		{"non-empty foreign folder", func(t *testing.T, root, _ string) string {
			out := filepath.Join(root, "out")
			must(t, os.MkdirAll(out, 0o755))
			must(t, os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o600))
			return out
		}, "%s: is not empty (notes.txt) and holds no .deployctl-generated: generate did not write it; " + advice},
		{"folder with .git", func(t *testing.T, root, _ string) string {
			out := filepath.Join(root, "repo")
			must(t, os.MkdirAll(filepath.Join(out, ".git"), 0o755))
			must(t, os.WriteFile(filepath.Join(out, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
			for _, f := range []string{"a.go", "b.go", "c.go"} {
				must(t, os.WriteFile(filepath.Join(out, f), nil, 0o644))
			}
			return out
		}, "%s: is not empty (.git, a.go, b.go, …) and holds no .deployctl-generated: generate did not write it; " + advice},
		{"the current folder as .", func(t *testing.T, root, _ string) string {
			t.Chdir(root)
			return "."
		}, "%s: is the current folder; holds the spec %r/minimal.yaml, which replacing the folder would delete; is not empty (minimal.yaml) and holds no .deployctl-generated: generate did not write it; " + advice},
		{"the current folder as $PWD", func(t *testing.T, root, _ string) string {
			t.Chdir(root)
			return root
		}, "%s: is the current folder; holds the spec %r/minimal.yaml, which replacing the folder would delete; is not empty (minimal.yaml) and holds no .deployctl-generated: generate did not write it; " + advice},
		{"a folder above the current one", func(t *testing.T, root, _ string) string {
			must(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
			t.Chdir(filepath.Join(root, "sub"))
			return ".."
		}, "%s: holds the current folder; holds the spec %r/minimal.yaml, which replacing the folder would delete; is not empty (minimal.yaml, sub) and holds no .deployctl-generated: generate did not write it; " + advice},
		{"the spec's folder, even with a marker", func(t *testing.T, root, spec string) string {
			must(t, os.WriteFile(filepath.Join(root, ".deployctl-generated"), []byte("platform: minimal\n"), 0o644))
			return root
		}, "%s: holds the spec %r/minimal.yaml, which replacing the folder would delete; " + advice},
		{"a regular file", func(t *testing.T, root, _ string) string {
			out := filepath.Join(root, "out.yaml")
			must(t, os.WriteFile(out, []byte("x: 1\n"), 0o644))
			return out
		}, "%s: is a regular file, not a folder; " + advice},
		{"a symbolic link to a folder", func(t *testing.T, root, _ string) string {
			must(t, os.Mkdir(filepath.Join(root, "real"), 0o755))
			out := filepath.Join(root, "link")
			must(t, os.Symlink(filepath.Join(root, "real"), out))
			return out
		}, "%s: is a symbolic link (to %r/real), not a folder: give the folder itself, or another path; " + advice},
		{"a symbolic link to a file", func(t *testing.T, root, spec string) string {
			out := filepath.Join(root, "link")
			must(t, os.Symlink(spec, out))
			return out
		}, "%s: is a symbolic link (to %r/minimal.yaml), not a folder: give the folder itself, or another path; " + advice},
		{"a device", func(t *testing.T, root, _ string) string {
			out := filepath.Join(root, "null")
			if !fssnap.Device(t, out) {
				t.Skip("mknod needs root")
			}
			return out
		}, "%s: is a device, not a folder; " + advice},
		{"a path below a file", func(t *testing.T, root, spec string) string {
			return filepath.Join(spec, "out")
		}, "%s: %r/minimal.yaml is a regular file, not a folder; " + advice},
		{"another platform's tree", func(t *testing.T, root, _ string) string {
			out := filepath.Join(root, "out")
			must(t, os.MkdirAll(filepath.Join(out, "applications"), 0o755))
			must(t, os.WriteFile(filepath.Join(out, ".deployctl-generated"), []byte("# ...\nplatform: other\n"), 0o644))
			return out
		}, `%s: holds the tree of platform "other", not "minimal": if that platform is gone (renamed), remove the folder yourself; ` + advice},
		{"a marker generate did not write", func(t *testing.T, root, spec string) string {
			out := filepath.Join(root, "out")
			must(t, os.Mkdir(out, 0o755))
			must(t, os.Symlink(spec, filepath.Join(out, ".deployctl-generated")))
			return out
		}, "%s: holds a .deployctl-generated generate did not write (it is a symbolic link); " + advice},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, spec := workspace(t)
			out := c.setup(t, root, spec)
			before := fssnap.Take(t, root)
			stdout, stderr, err := run(spec, "-o", out)
			want := strings.NewReplacer("%s", out, "%r", root).Replace(c.want)
			if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Invalid {
				t.Errorf("exit %d, err:\n%v\nwant exit 3:\n%s", exitcode.Of(err), err, want)
			}
			if stdout != "" || stderr != "" {
				t.Errorf("output: %q %q", stdout, stderr)
			}
			fssnap.Same(t, before, fssnap.Take(t, root))
		})
	}
}

// A bad -o is reported with the spec's own errors, in one pass.
func TestGenerateReportsSpecAndOutputErrorsTogether(t *testing.T) {
	root := t.TempDir()
	spec := filepath.Join(root, "bad.yaml")
	must(t, os.WriteFile(spec, []byte("apiVersion: nope\n"), 0o644))
	before := fssnap.Take(t, root)
	_, _, err := run(spec, "-o", spec)
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), spec+": is a regular file, not a folder; "+advice) || !strings.Contains(err.Error(), "apiVersion") {
		t.Errorf("exit %d: %v", exitcode.Of(err), err)
	}
	fssnap.Same(t, before, fssnap.Take(t, root))
}

// What generate wrote, it replaces; what an interrupted run left, it
// recovers.
func TestGenerateReplacesItsOwnTreeAndRecovers(t *testing.T) {
	root, spec := workspace(t)
	out := filepath.Join(root, "generated", "minimal")
	for range 2 {
		if _, stderr, err := run(spec, "-o", out); err != nil {
			t.Fatal(err, stderr)
		}
	}
	marker, err := os.ReadFile(filepath.Join(out, render.Marker))
	if err != nil || !strings.HasSuffix(string(marker), "\nplatform: minimal\n") {
		t.Fatalf("marker %q, %v", marker, err)
	}
	// Killed between the two renames: the old tree aside, out missing.
	aside := filepath.Join(root, "generated", ".minimal.new-42.old")
	must(t, os.Rename(out, aside))
	must(t, os.MkdirAll(filepath.Join(root, "generated", ".minimal.new-42", "applications"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "generated", ".minimal.new-42", render.Marker), marker, 0o644))
	stdout, stderr, err := run(spec, "-o", out)
	if err != nil {
		t.Fatal(err, stderr)
	}
	wantErr := "note: " + out + " was missing after an interrupted run: put back from " + aside + "\n" +
		"note: removed " + filepath.Join(root, "generated", ".minimal.new-42") + ", left by an interrupted run\n"
	if stderr != wantErr || !strings.HasPrefix(stdout, spec+": wrote ") {
		t.Errorf("stdout %q\nstderr:\n%s\nwant:\n%s", stdout, stderr, wantErr)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "generated"))
	if len(entries) != 1 || entries[0].Name() != "minimal" {
		t.Errorf("generated/ holds %v", entries)
	}
}
