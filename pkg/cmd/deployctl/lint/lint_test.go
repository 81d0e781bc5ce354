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
	big := write(t, 1200)
	stderr, err := lint(t, big)
	if exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("exit %d (%v), want 3", exitcode.Of(err), err)
	}
	if !strings.HasPrefix(stderr, big+": workflow-templates/deploy.yaml would be ") || !strings.Contains(stderr, "generate per stack with --scope stack:NAME") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
