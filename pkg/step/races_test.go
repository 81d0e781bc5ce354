package step

import (
	"strings"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/health"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

// Races the chaos test found (issue 18), each reproduced step by step: the
// test drives the fake's controller (scenario.manual) and waits for the
// step's own requests, so the order of events is fixed, not timed.

// refreshAfter reports whether the step has sent a refresh since version rv.
func (f *fakeArgo) refreshAfter(rv int) bool {
	for _, at := range f.refreshAt {
		if at >= rv {
			return true
		}
	}
	return false
}

// P1. A reconciliation begins before the operation finishes, having read a
// refresh annotation set earlier (by another client, or by the step's own
// nudge). The step's refresh after the sync changes nothing (the annotation
// already says normal); the slow reconciliation then writes its pre-sync
// Healthy and removes the annotation, which answers the step's refresh, with
// reconciledAt in the very second of finishedAt. The truth is Degraded
// (another client) or Progressing (nudge).
func TestRefreshRaceIsNotFreshHealth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		truth    []health.HealthStatusCode
		code     int
		msg      string
		annotate bool // else the step's own nudge sets the annotation
	}{
		{"annotation from another client", hs(degraded), exitcode.Failure, "is Degraded after its sync", true},
		{"annotation from the step's nudge", hs(progressing), exitcode.Timeout, "still Progressing", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tm := testTiming()
			if c.annotate {
				tm.startNudge = time.Hour
			}
			f := newFakeArgo(t, scenario{exists: true, before: healthy, after: c.truth, manual: true, resync: time.Hour})
			wait := startSyncAndWait(t, f, tm)
			f.waitFor("sync requested", func() bool { return f.app.Operation != nil })
			if !c.annotate {
				f.waitFor("the nudge's refresh", func() bool { return f.calls["refresh"] > 0 })
			}
			f.freeze(time.Date(2026, 1, 2, 3, 4, 5, 100e6, time.UTC)) // one second for all that follows
			f.startOurOp()
			if c.annotate {
				f.annotate("normal")
			}
			r1 := f.beginReconcile() // reads the annotation and the pre-sync Healthy
			f.finishOurOp()
			f.mu.Lock()
			finished := f.rv
			f.mu.Unlock()
			f.waitFor("the step's refresh after the sync", func() bool { return f.refreshAfter(finished) })
			f.endReconcile(r1) // stale Healthy; removes the annotation: the step's refresh is answered
			f.mu.Lock()
			if rec, fin := f.app.Status.ReconciledAt, f.app.Status.OperationState.FinishedAt; !rec.Equal(fin) {
				t.Errorf("reconciledAt %v, finishedAt %v: the race needs one second", rec, fin)
			}
			f.mu.Unlock()
			f.freeze(time.Time{})
			f.handOver()
			expect(t, wait(), c.code, c.msg)
		})
	}
}

// P4. The answer to the sync request is lost after Argo CD processed it,
// and the operation finishes before the step asks again: the step must
// follow that operation, not start a second one.
func TestLostSyncAnswerIsFollowedNotRepeated(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncAnswerLost: true})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.OK)
	if len(f.syncRequests) != 1 || !strings.Contains(o.stderr, "following it instead of asking again") {
		t.Errorf("sync requests %d; stderr:\n%s", len(f.syncRequests), o.stderr)
	}
}

// P4. The first sync request is processed late: after the step gave up on
// it, sent a second one and saw that operation finish. The late one starts
// a further operation of the same run; health counts only after it.
func TestLateSyncRequestIsWaitedFor(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncLate: true})
	o := startSyncAndWait(t, f, testTiming(), "--sync-timeout", "3s")()
	expect(t, o, exitcode.OK)
	f.mu.Lock()
	done := f.ourDone
	f.mu.Unlock()
	if len(f.syncRequests) != 2 || done != 2 || !strings.Contains(o.stderr, "a further operation of this run appeared") {
		t.Errorf("sync requests %d, our operations finished %d; stderr:\n%s", len(f.syncRequests), done, o.stderr)
	}
}

// P4. The sync request's answer times out and Argo CD processes it only
// after that, while the step would otherwise send it again: the step waits
// for the operation of the request it gave up on and follows it. Exactly
// one operation runs.
func TestSyncAnsweredAfterTimeoutRunsOneOperation(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncAnswerLate: true})
	o := startSyncAndWait(t, f, testTiming(), "--sync-timeout", "4s")()
	expect(t, o, exitcode.OK)
	f.mu.Lock()
	requests, done := len(f.syncRequests), f.ourDone
	f.mu.Unlock()
	if requests != 1 || done != 1 || !strings.Contains(o.stderr, "after its answer timed out; following it") {
		t.Errorf("sync requests %d, our operations finished %d, want 1 and 1; stderr:\n%s", requests, done, o.stderr)
	}
}

// The sync request's answer times out and it is never processed; then the
// API fails for a while. The request is sent again only after a read of
// the application succeeded, never on a read from before the failures.
func TestUnansweredSyncIsSentAgainOnlyAfterARead(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncDropped: 60})
	o := startSyncAndWait(t, f, testTiming(), "--sync-timeout", "8s")()
	expect(t, o, exitcode.OK)
	f.mu.Lock()
	trail, done := strings.Join(f.trail, ", "), f.ourDone
	f.mu.Unlock()
	_, afterFirst, _ := strings.Cut(trail, "sync, ")
	before, _, resent := strings.Cut(afterFirst, ", sync")
	if !resent || done != 1 || !strings.Contains(before, "get 503") || !strings.HasSuffix(before, "get") {
		t.Errorf("our operations %d; gets and syncs: %s", done, trail)
	}
}

// P3. The API answers 503 from the moment our operation starts (which then
// succeeds unseen). The sync deadline passes; the clean-up (terminate) is
// retried only until the node's deadline (sync + health timeout), not for a
// grace of its own: the step ends by its own deadline, not the test's.
func TestOutageEndsByTheNodeDeadline(t *testing.T) {
	t.Parallel()
	tm := testTiming()
	tm.terminateGrace = time.Hour
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncDuration: 200 * time.Millisecond})
	f.onOurOpStart = func(f *fakeArgo) { f.mu.Lock(); f.outageLocked(); f.mu.Unlock() }
	o := startSyncAndWait(t, f, tm, "--sync-timeout", "400ms", "--health-timeout", "400ms")()
	expect(t, o, exitcode.Transient, "the Argo CD API was failing when the deadline passed", "terminating it failed")
	if strings.Contains(o.str("message"), "interrupted") || f.count("terminate") == 0 {
		t.Errorf("terminate calls %d; message %s", f.count("terminate"), o.str("message"))
	}
}

// P2. A fresh Degraded, then the API fails from the confirming hard refresh
// on: the verdict is unconfirmed, so the exit is transient, never 1.
func TestUnconfirmedDegradedIsTransient(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true, after: hs(degraded, degraded, healthy), resync: time.Hour})
	f.onHardRefresh = (*fakeArgo).outageLocked
	o := syncAndWait(t, f)
	expect(t, o, exitcode.Transient, "is Degraded after its sync", "not confirmed")
}

// A 200 whose body is not Argo CD's JSON (a proxy's HTML page, an answer cut
// short) is a transport fault: retried, here after the create happened.
func TestUndecodableAnswerIsRetried(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{garbleCreate: 2})
	o := syncAndWait(t, f, "--manifest", writeManifest(t, "web-app"))
	expect(t, o, exitcode.OK)
	if f.count("create") != 3 || !strings.Contains(o.stderr, "undecodable answer") {
		t.Errorf("creates %d; stderr:\n%s", f.count("create"), o.stderr)
	}
}

// P5. The stream stalls after its first event and the app turns Degraded
// later. With the default stall check, confirmation delay and periodic
// refresh each as long as the whole health timeout, only their tie to the
// node's timeout lets the step see and confirm the Degraded in time.
func TestStalledStreamFailsFastWithinHealthTimeout(t *testing.T) {
	t.Parallel()
	tm := testTiming()
	tm.stallCheck, tm.confirmDelay, tm.progressRefresh = 2*time.Second, 2*time.Second, 2*time.Second
	f := newFakeArgo(t, scenario{exists: true, before: healthy, stream: streamStall, after: hs(progressing, progressing, degraded), resync: 100 * time.Millisecond})
	o := startSyncAndWait(t, f, tm, "--health-timeout", "2s")()
	expect(t, o, exitcode.Failure, "is Degraded after its sync")
}

// A server or proxy that quotes the request's Authorization header in its
// errors: the token reaches neither the log nor the result (startStep
// checks both).
func TestEchoedCredentialsAreRedacted(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, echoAuth: true, fail503: 2})
	o := syncAndWait(t, f)
	expect(t, o, exitcode.Failure, "application spec is invalid", "REDACTED")
	if !strings.Contains(o.stderr, "HTTP 503") {
		t.Errorf("the 503 was not logged:\n%s", o.stderr)
	}
}
