package importcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

func run(args ...string) (string, string, error) {
	return runWith(nil, args...)
}

func runWith(stdin []byte, args ...string) (string, string, error) {
	cmd := NewCommand()
	cmd.SetIn(bytes.NewReader(stdin))
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

const testdata = "../../../importer/testdata/"

func TestImportWritesAValidSpec(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rfc-platform.yaml")
	_, stderr, err := run(testdata+"rfc", "-o", file, "--image", "example.com/deploystep:v1")
	if err != nil {
		t.Fatal(err, stderr)
	}
	d, err := dag.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if d.Platform.Metadata.Name != "rfc-platform" || d.Platform.Spec.Workflow.Image != "example.com/deploystep:v1" || len(d.Apps()) != 41 {
		t.Errorf("%s, %s, %d apps", d.Platform.Metadata.Name, d.Platform.Spec.Workflow.Image, len(d.Apps()))
	}
	for _, want := range []string{
		"imported 41 apps in 23 stacks; 24 dependencies inferred from sync waves (24 between stacks); 1 field the spec cannot express\n", // one stack per wave of each parent
		`warning: backstage: metadata.namespace: "team-portal" → "argocd"`,
		"note: app-of-apps parents left out",
		"wrote " + file,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "placeholder") {
		t.Error("--image given, still a placeholder note")
	}
}

func TestImportStrictWritesNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.yaml")
	_, _, err := run(testdata+"lossy", "--strict", "-o", file)
	if err == nil || exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), "--strict") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", file, err)
	}
}

func TestImportToStdout(t *testing.T) {
	out, _, err := run(testdata+"folders", "--stack-from", "folder", "--name", "small")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "metadata: {name: small}") || !strings.Contains(out, "- database # inferred from sync-wave 1 → 2") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestImportInvalidArguments(t *testing.T) {
	for _, args := range [][]string{
		{testdata + "rfc", "--stack-from", "owner"},
		{testdata + "rfc", "--name", "Not_A_Label"},
		{testdata + "missing"},
		{testdata + "folders/apps/README.md"}, // no Application in it
	} {
		if _, _, err := run(args...); exitcode.Of(err) != exitcode.Invalid {
			t.Errorf("%v: err %v, want exit 3", args, err)
		}
	}
}

// kubectl get applications -A -o yaml | deployctl import -
func TestImportFromStdin(t *testing.T) {
	dump, err := os.ReadFile(testdata + "rfc/components.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runWith(dump, "-", testdata+"rfc/app-of-apps.yaml", "--name", "rfc")
	if err != nil {
		t.Fatal(err, stderr)
	}
	if !strings.Contains(stderr, "imported 41 apps in 23 stacks") || !strings.Contains(out, "- name: temporal-ui") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
