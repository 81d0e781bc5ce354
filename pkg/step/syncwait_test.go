package step

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/gitops-engine/pkg/health"
	synccommon "github.com/argoproj/gitops-engine/pkg/sync/common"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

var (
	healthy     = health.HealthStatusHealthy
	progressing = health.HealthStatusProgressing
	degraded    = health.HealthStatusDegraded
	suspended   = health.HealthStatusSuspended
	missing     = health.HealthStatusMissing
	unknown     = health.HealthStatusUnknown
)

func hs(h ...health.HealthStatusCode) []health.HealthStatusCode { return h }

func TestSyncAndWaitHealthy(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, after: hs(progressing, progressing, healthy)})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	if o.str("syncRevision") != "abc123" || o.str("operationPhase") != "Succeeded" || o.str("syncStatus") != "Synced" {
		t.Errorf("result %v", o.result)
	}
	tm := o.result["timings"].(map[string]any)
	for _, k := range []string{"syncRequestedAt", "syncFinishedAt", "healthyAt"} {
		if tm[k] == nil {
			t.Errorf("timings lack %s: %v", k, tm)
		}
	}
	if !strings.HasPrefix(o.stdout, "sync-and-wait web-app: Healthy at revision abc123") {
		t.Errorf("stdout %q", o.stdout)
	}
	if f.count("refresh") == 0 || len(f.syncRequests) != 1 || f.count("create") != 0 {
		t.Errorf("calls %v", f.calls)
	}
}

// The trap: after the sync the app still shows its old Healthy, and the
// controller's own post-sync reconciliation (begun during the sync) even
// stamps a new reconciledAt on it. The real health is Degraded.
func TestStaleHealthyAfterSyncIsNotTrusted(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true, after: hs(degraded), resync: time.Hour})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.Failure, "Degraded", "Deployment.apps ns/web (Degraded: web is Degraded)")
	if f.count("refresh") == 0 {
		t.Error("health must be judged after a refresh")
	}
}

func TestStaleHealthyThenProgressingWaitsForRealHealthy(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true,
		after: hs(progressing, progressing, progressing, healthy), resync: 60 * time.Millisecond})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	f.mu.Lock()
	reconciles := f.freshIdx
	f.mu.Unlock()
	if reconciles < 4 {
		t.Fatalf("exited after %d fresh reconciliations; Healthy came with the 4th", reconciles)
	}
}

// A server or proxy that answers GET ?refresh at once, without a
// reconciliation, proves nothing: such an answer is no newer than what the
// step had seen. Health comes from the controller's own later
// reconciliations; a Degraded that no hard refresh can confirm is a
// timeout, not a failure. (The controller reconciles on its own only twice
// after the sync, each writing a different health: enough to prove the
// Degraded fresh, none left to confirm it. A later own reconciliation would
// confirm it, rightly: a failure.)
func TestRefreshAnswerNotNewerIsNotTrusted(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, refreshIgnored: true, after: hs(progressing, degraded), resync: 300 * time.Millisecond, resyncsAfter: 2})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.Timeout, "is Degraded after its sync", "not confirmed")
	if f.count("refresh") < 2 || !strings.Contains(o.stderr, "no newer than what the step had seen") {
		t.Errorf("refreshes %d; stderr:\n%s", f.count("refresh"), o.stderr)
	}
}

func TestProgressingUntilHealthTimeout(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true, after: hs(progressing)})
	o := syncAndWait(t, f, "--health-timeout", "600ms")
	expect(t, o, exitcode.Timeout, "still Progressing 600ms after its sync", "Deployment.apps ns/web (Progressing: web is Progressing)")
}

// Health flapping Healthy → Degraded → Healthy: the first fresh verdict
// Degraded fails at once (fail fast), whatever came before or after.
// A Degraded that a hard refresh confirms fails, and soon: one confirmation
// delay, not the health timeout.
func TestPersistentDegradedFails(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true, after: hs(degraded), resync: 30 * time.Millisecond})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.Failure, "is Degraded after its sync", "degraded resources: Deployment.apps ns/web")
	if f.count("hard-refresh") != 1 {
		t.Errorf("hard refreshes %d, want 1 (the confirmation)", f.count("hard-refresh"))
	}
	if o.elapsed > time.Second {
		t.Errorf("Degraded must fail fast, took %s", o.elapsed)
	}
}

// A fresh Degraded or Missing that the next reconciliations do not repeat
// (a CRD not yet established, resources not yet in the controller's cache)
// is not a failure. (The first reconciliation after the sync is not yet
// proven fresh, fresh.go: the failing health lasts two.)
func TestMomentaryFailingHealthIsNotAFailure(t *testing.T) {
	t.Parallel()
	for _, bad := range []health.HealthStatusCode{degraded, missing} {
		t.Run(string(bad), func(t *testing.T) {
			t.Parallel()
			f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true, after: hs(bad, bad, progressing, healthy), resync: 30 * time.Millisecond})
			o := syncAndWait(t, f)
			expect(t, o, exitcode.OK)
			if !strings.Contains(o.stderr, "confirming with a hard refresh") {
				t.Errorf("the momentary %s must be confirmed, stderr:\n%s", bad, o.stderr)
			}
		})
	}
}

// Flapping while the sync runs is stale by definition and must not decide.
func TestFlappingDuringSyncIsIgnored(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncDuration: 300 * time.Millisecond,
		duringSync: hs(healthy, degraded, healthy, missing), resync: 20 * time.Millisecond, after: hs(progressing, healthy)})
	expect(t, syncAndWait(t, f), exitcode.OK)
}

func TestVerdicts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		after health.HealthStatusCode
		args  []string
		code  int
		msg   string
	}{
		{"missing", missing, nil, exitcode.Failure, "is Missing after its sync"},
		{"unknown", unknown, nil, exitcode.Failure, "Unknown"},
		{"suspended", suspended, nil, exitcode.Failure, "Suspended"},
		{"suspended allowed", suspended, []string{"--allow-suspended"}, exitcode.OK, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true, after: hs(c.after)})
			o := syncAndWait(t, f, c.args...)
			if c.msg == "" {
				expect(t, o, c.code)
			} else {
				expect(t, o, c.code, c.msg)
			}
		})
	}
}

func TestSyncFailedReportsArgoMessageAndResources(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, outcome: synccommon.OperationFailed,
		outcomeMsg: "one or more objects failed to apply, reason: admission webhook denied",
		results: []*v1alpha1.ResourceResult{
			{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web", Status: synccommon.ResultCodeSynced},
			{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "bad", Status: synccommon.ResultCodeSyncFailed, Message: "denied by policy"},
			{Group: "batch", Version: "v1", Kind: "Job", Namespace: "ns", Name: "migrate", HookType: synccommon.HookTypePreSync, HookPhase: synccommon.OperationFailed, Message: "BackoffLimitExceeded"},
		}})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.Failure, "sync of web-app failed: one or more objects failed to apply, reason: admission webhook denied",
		"ConfigMap ns/bad (SyncFailed: denied by policy)", "Job.batch ns/migrate (hook Failed: BackoffLimitExceeded)")
	if n := len(o.result["failingResources"].([]any)); n != 2 {
		t.Errorf("failingResources: %d", n)
	}
}

func writeManifest(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "web-app.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), `"name": "web-app"`, `"name": "`+name+`"`, 1)
	p := filepath.Join(t.TempDir(), "app.json")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A new app reports Missing after its first reconciliation, before its
// resources are applied: that must not fail the step.
func TestCreatesAbsentAppAndIgnoresEarlyMissing(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{after: hs(progressing, healthy)})
	o := syncAndWait(t, f, "--manifest", writeManifest(t, "web-app"))
	expect(t, o, exitcode.OK)
	if f.count("create") != 1 || o.result["created"] != true || o.str("appNamespace") != "argocd" {
		t.Errorf("create calls %d, result %v", f.count("create"), o.result)
	}
	// Idempotent: the second run finds it, upserts the same spec (which
	// changes nothing) and does not create it again.
	o = syncAndWait(t, f, "--manifest", writeManifest(t, "web-app"))
	expect(t, o, exitcode.OK)
	if o.result["created"] != false || f.updates != 0 {
		t.Errorf("second run created or updated again: updates %d, calls %v", f.updates, f.calls)
	}
	// A changed manifest (a new spec) reaches Argo CD.
	changed := writeManifest(t, "web-app")
	data, _ := os.ReadFile(changed)
	if err := os.WriteFile(changed, []byte(strings.Replace(string(data), `"targetRevision": "`, `"targetRevision": "v2-`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	o = syncAndWait(t, f, "--manifest", changed)
	expect(t, o, exitcode.OK)
	if f.updates != 1 || !strings.Contains(fmt.Sprint(o.result["messages"]), "updated the application to the manifest") {
		t.Errorf("changed manifest not applied: updates %d, result %v", f.updates, o.result)
	}
}

func TestManifestBase64(t *testing.T) {
	t.Parallel()
	data, _ := os.ReadFile(writeManifest(t, "web-app"))
	f := newFakeArgo(t, scenario{})
	expect(t, syncAndWait(t, f, "--manifest-base64", base64.StdEncoding.EncodeToString(data)), exitcode.OK)
}

func TestAbsentAppWithoutManifest(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.Failure, `application "web-app" does not exist in Argo CD and no manifest was given`)
}

func TestManifestForAnotherApp(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{})
	o := syncAndWait(t, f, "--manifest", writeManifest(t, "other"))
	expect(t, o, exitcode.Invalid, `the manifest is for application "other", not "web-app"`)
	if f.totalCalls() != 0 {
		t.Errorf("an invalid invocation must not touch the API: %v", f.calls)
	}
}

// An operation from an earlier attempt finishes: wait for it, then sync.
func TestWaitsForEarlierOperation(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, earlierOp: true})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	if f.count("terminate") != 0 || len(f.syncRequests) != 1 {
		t.Errorf("calls %v", f.calls)
	}
}

// An earlier operation stuck forever: terminated after the sync timeout,
// then our sync runs.
func TestTerminatesStuckEarlierOperation(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, earlierOp: true, earlierStuck: true})
	o := syncAndWait(t, f, "--sync-timeout", "400ms")
	expect(t, o, exitcode.OK)
	if f.count("terminate") != 1 || !strings.Contains(strings.Join(anyStrings(o.result["messages"]), "|"), "terminated an earlier operation") {
		t.Errorf("calls %v, messages %v", f.calls, o.result["messages"])
	}
}

// Our own operation stuck forever: timeout, and it is terminated.
func TestOurOperationStuck(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, ourOpStuck: true})
	o := syncAndWait(t, f, "--sync-timeout", "400ms")
	expect(t, o, exitcode.Timeout, "sync of web-app did not finish within 400ms", "it was terminated")
	if f.count("terminate") != 1 {
		t.Errorf("calls %v", f.calls)
	}
}

func TestAnotherOperationInProgressIsRetried(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, conflicts: 3})
	expect(t, syncAndWait(t, f), exitcode.OK)
	if len(f.syncRequests) != 4 {
		t.Errorf("sync requests %d", len(f.syncRequests))
	}
}

// The controller misses the update that set our operation: the step asks
// for a refresh, which makes it start.
func TestMissedOperationIsNudged(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, missesOp: true})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	if !strings.Contains(o.stderr, "has not started the sync of web-app") {
		t.Errorf("no nudge logged; stderr:\n%s", o.stderr)
	}
}

// Argo CD does not reassess the app on its own (a status-only change it
// ignores; here: no periodic reconciliation at all): the step's periodic
// refresh does.
func TestProgressingIsRefreshed(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true,
		after: hs(progressing, progressing, healthy), resync: time.Hour})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	if !strings.Contains(o.stderr, "is still Progressing after") {
		t.Errorf("no periodic refresh logged; stderr:\n%s", o.stderr)
	}
}

func TestAnotherOperationInProgressForever(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, conflicts: 1 << 30})
	o := syncAndWait(t, f, "--sync-timeout", "500ms")
	expect(t, o, exitcode.Transient, "another operation is already in progress")
}

func TestTokenRejectedAtFirst(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, reject401: 4})
	expect(t, syncAndWait(t, f), exitcode.OK)
}

func TestTokenRejectedForever(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, reject401: 1 << 30})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.Transient, "kept rejecting the token", "token is not valid yet")
}

func TestServiceUnavailableIsRetried(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, fail503: 6})
	expect(t, syncAndWait(t, f), exitcode.OK)
}

func TestServiceUnavailableForever(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, fail503: 1 << 30})
	o := syncAndWait(t, f, "--sync-timeout", "2s")
	expect(t, o, exitcode.Transient, "still failing when the deadline passed", "HTTP 503")
}

// Connection refused in the middle of the watch: the server goes away while
// our sync runs and comes back; the step reconnects and finishes.
func TestConnectionRefusedMidWatch(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncDuration: 200 * time.Millisecond})
	f.onOurOpStart = func(f *fakeArgo) { time.Sleep(30 * time.Millisecond); f.goDown(400 * time.Millisecond) }
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	if f.count("watch") < 2 || !strings.Contains(o.stderr, "reconnecting") {
		t.Errorf("watch calls %d; stderr:\n%s", f.count("watch"), o.stderr)
	}
}

func TestServerGoneForGood(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncDuration: 200 * time.Millisecond})
	f.onOurOpStart = func(f *fakeArgo) { f.goDown(0) }
	o := syncAndWait(t, f, "--sync-timeout", "600ms")
	expect(t, o, exitcode.Transient, "the Argo CD API was failing when the deadline passed", "connection refused")
}

// Every stream connection is cut after one event: the step keeps up.
func TestStreamDroppedAfterEveryEvent(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, stream: streamDrop})
	expect(t, syncAndWait(t, f), exitcode.OK)
	if f.count("watch") < 3 {
		t.Errorf("watch calls %d", f.count("watch"))
	}
}

// A stream that stalls (stays open, sends nothing more) is detected within
// stallCheck and reopened.
func TestStalledStream(t *testing.T) {
	for _, mode := range []streamMode{streamStall, streamSilent} {
		t.Run(map[streamMode]string{streamStall: "after first event", streamSilent: "silent"}[mode], func(t *testing.T) {
			t.Parallel()
			f := newFakeArgo(t, scenario{exists: true, before: healthy, stream: mode})
			o := syncAndWait(t, f)
			expect(t, o, exitcode.OK)
			if !strings.Contains(o.stderr, "stream stalled") {
				t.Errorf("stall not detected; stderr:\n%s", o.stderr)
			}
		})
	}
}

func TestStreamUnavailableFallsBackToPolling(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, stream: streamUnsupported})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	if f.count("watch") != 1 || f.count("get") < 3 || !strings.Contains(o.stderr, "polling every 50ms") {
		t.Errorf("calls %v; stderr:\n%s", f.calls, o.stderr)
	}
}

// With the stream, a change is seen within milliseconds, not a poll period.
func TestChangeNoticedQuickly(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, after: hs(progressing, healthy), resync: 700 * time.Millisecond})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	f.mu.Lock()
	last := f.lastReconcile
	f.mu.Unlock()
	tm := o.result["timings"].(map[string]any)
	healthyAt, _ := time.Parse(time.RFC3339Nano, tm["healthyAt"].(string))
	if lag := healthyAt.Sub(last); lag < 0 || lag > 100*time.Millisecond {
		t.Fatalf("Healthy noticed %s after it was reported", lag)
	}
}

func anyStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
