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

	"github.com/deployctl/deployctl/pkg/exitcode"
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
	raw            []byte // the result file as written
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
	return startStep(t, addr, testTiming(), args...)()
}

// startStep starts deploystep in-process with timing tm; the returned func
// waits for it (call it from the test's goroutine) and checks what every
// run must keep: one line on stdout, a result file, no token anywhere.
func startStep(t *testing.T, addr string, tm timing, args ...string) func() outcome {
	t.Helper()
	return startStepEnv(t, context.Background(), addr, tm, nil, args...)
}

// startStepEnv is startStep with extra environment variables; cancelling
// ctx is the pod's SIGTERM.
func startStepEnv(t *testing.T, parent context.Context, addr string, tm timing, extraEnv map[string]string, args ...string) func() outcome {
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
	for k, v := range extraEnv {
		env[k] = v
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stdout, stderr bytes.Buffer
	// The guard is a cancellation, like the pod's SIGTERM: a step that
	// outlives its own deadlines ends "interrupted", which tests can tell.
	ctx, cancel := context.WithCancel(parent)
	guard := time.AfterFunc(20*time.Second, cancel)
	done := make(chan outcome, 1)
	go func() {
		defer cancel()
		defer guard.Stop()
		start := time.Now()
		code := run(ctx, args, lookup, &stdout, &stderr, tm)
		done <- outcome{code: code, stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	}()
	return func() outcome {
		t.Helper()
		o := <-done
		data, err := os.ReadFile(resultFile)
		if err != nil {
			t.Fatalf("no result file: %v\nstderr:\n%s", err, o.stderr)
		}
		o.raw = data
		if err := json.Unmarshal(data, &o.result); err != nil {
			t.Fatalf("result file: %v\n%s", err, data)
		}
		if got := int(o.result["exitCode"].(float64)); got != o.code {
			t.Fatalf("result file says exit %d, process %d", got, o.code)
		}
		if strings.Count(o.stdout, "\n") != 1 {
			t.Fatalf("stdout must be one line, got %q", o.stdout)
		}
		if strings.Contains(o.stdout+o.stderr+string(data), fakeToken) {
			t.Fatalf("the token leaked into the output:\n%s\n%s\n%s", o.stdout, o.stderr, data)
		}
		return o
	}
}

// syncAndWait runs sync-and-wait for the fake's app and checks the property
// every scenario must keep: exit 0 only if the step was shown health from a
// reconciliation that started after the last of its operations finished,
// and that health was Healthy (or Suspended with --allow-suspended).
func syncAndWait(t *testing.T, f *fakeArgo, extra ...string) outcome {
	t.Helper()
	return startSyncAndWait(t, f, testTiming(), extra...)()
}

func startSyncAndWait(t *testing.T, f *fakeArgo, tm timing, extra ...string) func() outcome {
	t.Helper()
	args := append([]string{"sync-and-wait", "--app", "web-app", "--sync-timeout", "1500ms", "--health-timeout", "1500ms"}, extra...)
	wait := startStep(t, f.addr, tm, args...)
	return func() outcome {
		t.Helper()
		o := wait()
		if o.code == exitcode.OK {
			ok := []health.HealthStatusCode{health.HealthStatusHealthy}
			if strings.Contains(strings.Join(extra, " "), "--allow-suspended") {
				ok = append(ok, health.HealthStatusSuspended)
			}
			if !f.shownFresh(ok...) {
				t.Fatalf("exit 0 without fresh Healthy after the last of its operations\nstderr:\n%s", o.stderr)
			}
			if o.str("health") != "Healthy" && o.str("health") != "Suspended" {
				t.Fatalf("exit 0 with health %q", o.str("health"))
			}
		}
		return o
	}
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
