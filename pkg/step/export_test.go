package step

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/health"
)

// What the plugin's tests in package step_test (plugin_test.go) use of the
// fake Argo CD: they drive pkg/step/plugin, which imports this package.

// ExecForTest is Exec with the tests' short timing.
func ExecForTest(ctx context.Context, args []string, env func(string) (string, bool), log io.Writer) Outcome {
	return execOutcome(ctx, args, env, log, testTiming())
}

// FakeArgo is the fake Argo CD of one application, web-app.
type FakeArgo = fakeArgo

// NewFakeArgoFor starts a fake whose existing, Healthy web-app syncs in
// syncDuration and then turns Healthy, or Degraded if degraded. A
// controllerTick > 0 slows the fake's controller loop (the benchmark runs
// 500 of them).
func NewFakeArgoFor(t testing.TB, syncDuration time.Duration, degraded bool, controllerTick time.Duration) *FakeArgo {
	sc := scenario{exists: true, before: healthy, syncDuration: syncDuration, tick: controllerTick}
	if degraded {
		sc.staleAfterOp, sc.after, sc.resync = true, hs(health.HealthStatusDegraded), 30*time.Millisecond
	}
	return newFakeArgo(t, sc)
}

// StepEnv is the environment a plugin template passes for this fake.
func (f *fakeArgo) StepEnv(t testing.TB) map[string]string {
	tok := filepath.Join(t.TempDir(), "argocd-token")
	if err := os.WriteFile(tok, []byte(fakeToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"ARGOCD_SERVER": f.addr, "ARGOCD_PLAINTEXT": "true", "ARGOCD_TOKEN_FILE": tok, "REQUEST_TIMEOUT": "1s"}
}

// SyncRequests is how many sync requests reached the fake.
func (f *fakeArgo) SyncRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.syncRequests)
}

// OurOpRunning reports whether an operation of ours is running now.
func (f *fakeArgo) OurOpRunning() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.app.Status.OperationState
	return st != nil && ours(&st.Operation) && !st.Phase.Completed()
}

// ShownFreshHealthy: the step was shown Healthy from a reconciliation that
// began after the last of its operations finished.
func (f *fakeArgo) ShownFreshHealthy() bool { return f.shownFresh(health.HealthStatusHealthy) }

// HoldOurOpAndRevokeToken keeps our operation running until ReleaseOurOp, and when it
// starts revokes the token and cuts the connections: the step then ends
// Transient (the token kept being rejected) while its operation runs on.
func (f *fakeArgo) HoldOurOpAndRevokeToken() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sc.ourOpStuck = true
	f.onOurOpStart = func(f *fakeArgo) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.sc.reject401 = 1 << 30
		for c := range f.conns {
			c.Close()
		}
	}
}

// RestoreToken accepts the token again.
func (f *fakeArgo) RestoreToken() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sc.reject401 = 0
}

// ReleaseOurOp lets the controller finish our held operation.
func (f *fakeArgo) ReleaseOurOp() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sc.ourOpStuck = false
}
