package lint

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/internal/testplatform"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/spec"
)

func lint(t *testing.T, file string) (string, error) {
	t.Helper()
	cmd := NewCommand()
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{file})
	err := cmd.Execute()
	return stderr.String(), err
}

func write(t *testing.T, apps int) string {
	t.Helper()
	b, err := yaml.Marshal(testplatform.Random(rand.New(rand.NewSource(1)), 10, apps))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lint refuses what generate would refuse, including the size of a compiled
// object, which no spec rule can see.
func TestLintRefusesWhatGenerateRefuses(t *testing.T) {
	if _, err := lint(t, write(t, 40)); err != nil {
		t.Fatalf("a small platform: %v", err)
	}
	big := write(t, 3000)
	stderr, err := lint(t, big)
	if exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("exit %d (%v), want 3", exitcode.Of(err), err)
	}
	if !strings.HasPrefix(stderr, big+": workflow-templates/deploy.yaml would be ") || !strings.Contains(stderr, "generate per stack with --scope stack:NAME") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// In plugin mode lint passes the spec and says what the mode needs of the
// cluster; in pod mode it says nothing of it.
func TestLintNamesPluginMode(t *testing.T) {
	p := testplatform.Random(rand.New(rand.NewSource(1)), 3, 5)
	for _, mode := range []spec.StepMode{spec.StepModePod, spec.StepModePlugin} {
		p.Spec.Workflow.StepMode = mode
		b, err := yaml.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := NewCommand()
		var stdout bytes.Buffer
		cmd.SetOut(&stdout)
		cmd.SetErr(&stdout)
		cmd.SetArgs([]string{file})
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if got := strings.Contains(stdout.String(), "ARGO_EXECUTOR_PLUGINS=true"); got != (mode == "plugin") {
			t.Errorf("%s mode: %s", mode, stdout.String())
		}
	}
}
