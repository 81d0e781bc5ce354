package step

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

// A failed step leaves its one-line reason as the container's termination
// message, which Argo shows on the node.
func TestTerminationMessageCarriesTheReason(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true, after: hs(degraded), resync: 30 * time.Millisecond})
	path := filepath.Join(t.TempDir(), "termination-log")
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil { // the kubelet creates it
		t.Fatal(err)
	}
	o := startStepEnv(t, context.Background(), f.addr, testTiming(), map[string]string{"TERMINATION_MESSAGE_PATH": path},
		"sync-and-wait", "--app", "web-app", "--sync-timeout", "1500ms", "--health-timeout", "1500ms")()
	expect(t, o, exitcode.Failure, "is Degraded after its sync")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.TrimSuffix(o.stdout, "\n") {
		t.Errorf("termination message %q, want the stdout line %q", got, o.stdout)
	}
	if !strings.Contains(string(got), "Deployment.apps ns/web") {
		t.Errorf("termination message %q does not name the degraded resource", got)
	}
}

// Outside a pod the file does not exist: nothing is created, the step's
// outcome is unchanged.
func TestTerminationMessageSkippedWhenAbsent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "no-such-dir", "termination-log")
	writeTerminationMessage(func(string) (string, bool) { return path, true }, "sync-and-wait web: FAILED")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a termination message file was created outside a pod: %v", err)
	}
}

// Kubernetes keeps 4096 bytes: a longer reason is cut at a character
// boundary, never left as invalid UTF-8.
func TestTerminationMessageBounded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "termination-log")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	long := "x" + strings.Repeat("é", 5000)
	writeTerminationMessage(func(string) (string, bool) { return path, true }, long)
	got, _ := os.ReadFile(path)
	if len(got) > terminationMessageMax || len(got) < terminationMessageMax-4 || !utf8.Valid(got) || !strings.HasSuffix(string(got), "…") {
		t.Errorf("termination message of %d bytes (valid UTF-8 %v)", len(got), utf8.Valid(got))
	}
}
