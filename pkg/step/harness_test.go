package step

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/health"
)

// testTiming keeps every scenario well under a few seconds.
func testTiming() timing {
	return timing{
		pollInterval:    50 * time.Millisecond,
		stallCheck:      200 * time.Millisecond,
		backoffInitial:  20 * time.Millisecond,
		backoffMax:      200 * time.Millisecond,
		authGrace:       time.Second,
		terminateGrace:  time.Second,
		checkInterval:   50 * time.Millisecond,
		refreshRetry:    50 * time.Millisecond,
		confirmDelay:    50 * time.Millisecond,
		startNudge:      100 * time.Millisecond,
		progressRefresh: 100 * time.Millisecond,
		validateBudget:  2 * time.Second,
	}
}

// outcome is one run of the step.
type outcome struct {
	code           int
	stdout, stderr string
	result         map[string]any
	elapsed        time.Duration
}

func (o outcome) str(key string) string {
	s, _ := o.result[key].(string)
	return s
}

// runStep runs deploystep in-process against the fake, configured through
// the environment as the workflow templates do.
func runStep(t *testing.T, addr string, args ...string) outcome {
	t.Helper()
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(fakeToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	resultFile := filepath.Join(dir, "out", "result.json")
	env := map[string]string{
		"ARGOCD_SERVER": addr, "ARGOCD_PLAINTEXT": "true", "ARGOCD_TOKEN_FILE": tok,
		"RESULT_FILE": resultFile, "REQUEST_TIMEOUT": "1s",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	code := run(ctx, args, lookup, &stdout, &stderr, testTiming())
	o := outcome{code: code, stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	data, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatalf("no result file: %v\nstderr:\n%s", err, o.stderr)
	}
	if err := json.Unmarshal(data, &o.result); err != nil {
		t.Fatalf("result file: %v\n%s", err, data)
	}
	if got := int(o.result["exitCode"].(float64)); got != code {
		t.Fatalf("result file says exit %d, process %d", got, code)
	}
	if strings.Count(o.stdout, "\n") != 1 {
		t.Fatalf("stdout must be one line, got %q", o.stdout)
	}
	if strings.Contains(o.stdout+o.stderr+string(data), fakeToken) {
		t.Fatal("the token leaked into the output")
	}
	return o
}

// syncAndWait runs sync-and-wait for the fake's app and checks the property
// every scenario must keep: exit 0 only if the step was shown health from a
// reconciliation that started after its sync finished, and that health was
// Healthy (or Suspended with --allow-suspended).
func syncAndWait(t *testing.T, f *fakeArgo, extra ...string) outcome {
	t.Helper()
	args := append([]string{"sync-and-wait", "--app", "web-app", "--sync-timeout", "1500ms", "--health-timeout", "1500ms"}, extra...)
	o := runStep(t, f.addr, args...)
	if o.code == ExitOK {
		f.mu.Lock()
		fresh := f.servedFresh[health.HealthStatusHealthy]
		if strings.Contains(strings.Join(extra, " "), "--allow-suspended") {
			fresh = fresh || f.servedFresh[health.HealthStatusSuspended]
		}
		f.mu.Unlock()
		if !fresh {
			t.Fatalf("exit 0 without fresh Healthy after the sync\nstderr:\n%s", o.stderr)
		}
		if o.str("health") != "Healthy" && o.str("health") != "Suspended" {
			t.Fatalf("exit 0 with health %q", o.str("health"))
		}
	}
	return o
}

func expect(t *testing.T, o outcome, code int, msgParts ...string) {
	t.Helper()
	msg := o.str("message")
	if o.code != code {
		t.Fatalf("exit %d, want %d: %s\nstdout: %s\nstderr:\n%s", o.code, code, msg, o.stdout, o.stderr)
	}
	for _, p := range msgParts {
		if !strings.Contains(msg, p) || !strings.Contains(o.stdout, p) {
			t.Errorf("message %q (stdout %q) lacks %q", msg, o.stdout, p)
		}
	}
}
