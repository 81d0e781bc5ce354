package step

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// requestInfo numbers the sync requests of one run. Together with the run's
// syncIDInfo it names one operation: a request sent again after its answer
// was lost gets a new number, so an operation the first one started after
// all (late, or with its answer lost) is told from the second.
const requestInfo = "deploystep.request"

// errOursAgain: while the step waited for health, a further operation of
// this run appeared (a request Argo CD processed late). Health must then be
// judged after that one.
var errOursAgain = errors.New("a further operation of this run appeared")

// ourSync is this run's sync: its id, the requests sent, and the operation
// the step accepted as finished.
type ourSync struct {
	id       string
	requests int // sync requests sent so far, numbered from 1
	final    int // request number of the finished operation the step accepted
	finalAt  string
}

// request is the request number of op if one of ours started it, else 0.
func (s *ourSync) request(op *argocd.Operation) int {
	if !op.HasInfo(syncIDInfo, s.id) {
		return 0
	}
	n, err := strconv.Atoi(op.InfoValue(requestInfo))
	if err != nil || n < 1 {
		return -1 // ours, but not numbered by us: never the one we accepted
	}
	return n
}

// state is our latest operation as the view shows it: requested (in
// .operation, not yet finished) and the operation state when it is ours.
func (s *ourSync) state(a *argocd.Application) (pending int, st *argocd.OperationState, n int) {
	pending = s.request(a.Operation)
	if st = a.Status.OperationState; st != nil {
		n = s.request(&st.Operation)
	}
	return pending, st, n
}

// seen is the number of a request of ours that Argo CD has turned into an
// operation (pending, running or finished), 0 if none.
func (s *ourSync) seen(a *argocd.Application) int {
	pending, _, n := s.state(a)
	if pending != 0 {
		return pending
	}
	return n
}

// adoptable is the request number of an operation of ours that a run
// given this sync id should follow rather than sync again: requested,
// running, or the last one finished while nobody requested another since
// (a newer operation of anyone else supersedes ours). 0 if none.
func (s *ourSync) adoptable(a *argocd.Application) int {
	pending, _, n := s.state(a)
	switch {
	case pending != 0:
		return pending
	case n != 0 && a.Operation == nil:
		return n
	}
	return 0
}

// settled returns our finished operation when nothing of ours is pending.
func (s *ourSync) settled(a *argocd.Application) *argocd.OperationState {
	pending, st, n := s.state(a)
	if pending != 0 || n == 0 || !st.Phase.Completed() {
		return nil
	}
	return st
}

// newOurs reports whether a has an operation of ours other than the one
// the step accepted: requested, running, or finished after it.
func (s *ourSync) newOurs(a *argocd.Application) bool {
	if a == nil {
		return false
	}
	pending, st, n := s.state(a)
	if pending != 0 {
		return true
	}
	return n != 0 && (n != s.final || !st.Phase.Completed() || finishedAt(st) != s.finalAt)
}

func finishedAt(st *argocd.OperationState) string {
	if st.FinishedAt == nil {
		return ""
	}
	return st.FinishedAt.UTC().Format(time.RFC3339Nano) + "/" + st.StartedAt.UTC().Format(time.RFC3339Nano)
}

// sync requests our sync and waits for it to finish. Before a request is
// sent again (its answer lost, refused as "in progress", or not readable),
// the application is read: an operation one of our requests started is
// adopted instead, so one node never runs two syncs. A request whose answer
// timed out is first given one more request timeout to show its operation
// (latesync.go).
func (r *runner) sync(node context.Context, src *appSource, app *argocd.Application, s *ourSync, timeout time.Duration, res *stepresult.SyncResult) error {
	name := src.name
	ctx, cancel := context.WithTimeout(node, timeout)
	defer cancel()
	// Prune as the app's own automated policy says: the manifest author's
	// decision, not the step's (none when that policy is off).
	prune := app.Spec.AutomatedPrune()
	var last error // the previous sync request's error
	err := r.call(ctx, "sync application "+name, func(ctx context.Context) error {
		if argocd.IsUnanswered(last) {
			n, err := r.awaitLateSync(ctx, src, s)
			if err != nil {
				return err
			}
			if n != 0 {
				r.log("Argo CD started the operation of sync request %d of %s after its answer timed out; following it instead of asking again", n, name)
				return nil
			}
		} else if s.requests > 0 {
			cur, err := r.c.Get(ctx, name)
			if err != nil {
				return err
			}
			src.offer(cur)
			if n := s.seen(cur); n != 0 {
				r.log("Argo CD did start the operation of sync request %d of %s; following it instead of asking again", n, name)
				return nil
			}
		}
		s.requests++
		infos := []argocd.Info{{Name: syncIDInfo, Value: s.id}, {Name: requestInfo, Value: strconv.Itoa(s.requests)}}
		a, err := r.c.Sync(ctx, name, prune, infos)
		if err == nil {
			src.offer(a)
		}
		last = err
		return err
	})
	if err != nil {
		return err
	}
	stamp(&res.Timings.SyncRequestedAt)
	r.log("sync of %s requested (id %s, request %d); waiting up to %s for it to finish", name, s.id, s.requests, timeout)
	return r.awaitOurs(ctx, node, src, s, timeout, res)
}

// awaitOurs waits until our latest operation has finished and nothing of
// ours is pending, then arms the proof of freshness (fresh.go) at the view
// that showed it. ctx carries the sync deadline; clean-up after it runs
// within node, the node's deadline.
func (r *runner) awaitOurs(ctx, node context.Context, src *appSource, s *ourSync, timeout time.Duration, res *stepresult.SyncResult) error {
	name := src.name
	stopNudging := r.nudgeUntilStarted(ctx, src, s)
	defer stopNudging()
	var final *argocd.OperationState
	err := src.wait(ctx, func(v view) (bool, error) {
		if v.gone() {
			return false, fail(exitcode.Failure, "application %s was deleted during its sync", name)
		}
		if final = s.settled(v.app); final == nil {
			return false, nil
		}
		src.armFreshness(v.app)
		return true, nil
	})
	if err == errWaitDeadline {
		// Do not leave a half-done sync behind us: the next attempt would
		// have to wait for it. Within the node's deadline, whatever the
		// API does meanwhile.
		tctx, cancel := context.WithTimeout(node, r.t.terminateGrace)
		defer cancel()
		terr := r.terminate(tctx, name)
		detail := "it was terminated"
		if terr != nil {
			detail = "terminating it failed: " + terr.Error()
		}
		return src.deadlineError("sync of %s did not finish within %s (%s); %s", name, timeout, describeOperation(src.current().app), detail)
	}
	if err != nil {
		return err
	}
	s.final, s.finalAt = s.request(&final.Operation), finishedAt(final)
	stamp(&res.Timings.SyncFinishedAt)
	res.OperationPhase = string(final.Phase)
	if final.SyncResult != nil {
		res.SyncRevision = final.SyncResult.Revision
		if res.SyncRevision == "" {
			res.SyncRevision = strings.Join(final.SyncResult.Revisions, ",")
		}
	}
	if final.Phase.Successful() {
		r.log("sync of %s succeeded at revision %s", name, res.SyncRevision)
		return nil
	}
	var failing []string
	if final.SyncResult != nil {
		for _, rr := range final.SyncResult.Resources {
			if rr.Failed() {
				status := string(rr.Status)
				if rr.HookPhase == argocd.PhaseFailed || rr.HookPhase == argocd.PhaseError {
					status = "hook " + string(rr.HookPhase)
				}
				i := issue(rr.Ref(), status, rr.Message)
				res.FailingResources = append(res.FailingResources, i)
				failing = append(failing, i.String())
			}
		}
	}
	msg := fmt.Sprintf("sync of %s %s: %s", name, strings.ToLower(string(final.Phase)), final.Message)
	if len(failing) > 0 {
		msg += "; failing resources: " + strings.Join(failing, "; ")
	}
	return fail(exitcode.Failure, "%s", msg)
}

// terminate asks Argo CD to stop the running operation; one that ended
// meanwhile is fine.
func (r *runner) terminate(ctx context.Context, name string) error {
	err := r.call(ctx, "terminate operation of "+name, func(ctx context.Context) error {
		return r.c.TerminateOperation(ctx, name)
	})
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "no operation is in progress") {
		return nil
	}
	return err
}

// nudgeUntilStarted asks for a refresh each startNudge while the
// controller has not started our requested operation. On the e2e cluster
// Argo CD 3.0's application controller now and then misses the update that
// sets an operation (it was reconciling the app that very moment) and starts
// it only when something else changes the app. A refresh is such a change,
// and harmless if the operation has started meanwhile.
func (r *runner) nudgeUntilStarted(ctx context.Context, src *appSource, s *ourSync) func() {
	return r.refreshWhile(ctx, src, r.t.startNudge, func(v view, waited time.Duration) string {
		pending, _, n := s.state(v.app)
		if pending == 0 || pending == n {
			return ""
		}
		return fmt.Sprintf("Argo CD has not started the sync of %s after %s; asking for a refresh", src.name, waited)
	})
}

// refreshWhile asks Argo CD to refresh the application every interval for
// as long as need, given the current view and the time waited so far,
// returns a reason (which is logged); "" stops it. The returned func stops
// it too and waits for it.
func (r *runner) refreshWhile(ctx context.Context, src *appSource, interval time.Duration, need func(v view, waited time.Duration) string) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for waited := interval; ; waited += interval {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			v := src.current()
			if v.app == nil {
				continue
			}
			why := need(v, waited)
			if why == "" {
				return
			}
			r.log("%s", why)
			rctx, rcancel := context.WithTimeout(ctx, interval)
			if _, err := r.c.Refresh(rctx, src.name); err != nil && ctx.Err() == nil {
				r.log("refresh of %s: %v", src.name, err)
			}
			rcancel()
		}
	}()
	return func() { cancel(); <-done }
}
