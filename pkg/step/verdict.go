package step

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
	"github.com/deployctl/deployctl/pkg/stepcontract"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// The stale-Healthy trap. Right after a sync Argo CD still reports the health
// of the last reconciliation before it (Kargo #2196, argo-cd #22741): the
// operation's end is written first and the health only by a later
// reconciliation, and a reconciliation that began during the sync can end
// after it with pre-sync health. A just-created app likewise reports Missing
// until its resources are applied.
//
// Neither timestamps nor a single refresh settle it. reconciledAt and
// finishedAt travel as whole seconds, and reconciledAt is taken at the *end*
// of a reconciliation. And the answer to GET ?refresh is the first version
// without the refresh annotation, which a reconciliation that began before
// the request removes too when it had read an annotation set earlier (by
// another client, or by the step's own nudge): a merge patch deletes the key
// whatever its value is by then. So health is judged only from views that
// fresh.go proves come from a reconciliation begun after the operation
// finished; the step sends refreshes back to back until it has such a view.

// One fresh reconciliation can still be wrong for a moment: a CRD applied by
// the sync is Degraded ("not established") until the apiserver serves it, an
// app whose resources were just created can be Missing until the
// controller's watch delivers them, and Argo CD 3 keeps judging a re-created
// CRD from its cache until a hard refresh. So a failing verdict is confirmed
// once more, confirmDelay later, by a hard refresh answered by a later
// reconciliation; the step fails only if that agrees. A verdict the step
// could not confirm (the API failing, the deadline) is transient or a
// timeout, never a failure.

// awaitFreshHealth waits until fresh health decides the outcome: Healthy
// passes; Progressing waits until ctx's deadline; Degraded, Missing, Unknown
// (and Suspended unless allowed) fail once confirmed. errOursAgain: a further
// operation of this run appeared.
func (r *runner) awaitFreshHealth(ctx context.Context, src *appSource, o stepcontract.SyncAndWait, s *ourSync, res *stepresult.SyncResult) error {
	name := src.name
	stopRefreshing := r.refreshForHealth(ctx, src)
	defer stopRefreshing()
	for {
		var verdict error
		err := src.wait(ctx, func(v view) (bool, error) {
			switch {
			case v.gone():
				return false, fail(exitcode.Failure, "application %s was deleted while waiting for its health", name)
			case s.newOurs(v.app):
				return false, errOursAgain
			case !v.fresh:
				return false, nil
			}
			done, verr := r.judge(ctx, v.app, o.AllowSuspended, res)
			verdict = verr
			return done || verr != nil, nil
		})
		if err == errWaitDeadline {
			last := src.current()
			if !last.fresh {
				return src.deadlineError("no reconciliation of %s that began after its sync could be seen within %s", name, o.HealthTimeout)
			}
			return src.deadlineError("application %s is still %s %s after its sync%s", name, healthOf(last.app), o.HealthTimeout, notHealthy(last.app))
		}
		if err != nil || verdict == nil {
			return err
		}
		if done, err := r.confirm(ctx, src, o, s, verdict, res); done {
			return err
		}
	}
}

// confirm asks a later reconciliation about a failing verdict: a hard
// refresh, confirmDelay after it. done with the verdict when the answer
// agrees, with nil when it is Healthy; not done when the failure was
// momentary. When no answer comes before the deadline the verdict stays
// unconfirmed: a transient exit, or a timeout.
func (r *runner) confirm(ctx context.Context, src *appSource, o stepcontract.SyncAndWait, s *ourSync, verdict error, res *stepresult.SyncResult) (bool, error) {
	name := src.name
	unconfirmed := func(code int, why string) error {
		return fail(code, "%v — not confirmed: %s", verdict, why)
	}
	// deadlinePassed: the step's own deadline ended the wait or cut the
	// hard refresh short, which is a timeout, not a fault of Argo CD's
	// (transient only when Argo CD's answers were failing then).
	deadlinePassed := func() (bool, error) {
		if errors.Is(ctx.Err(), context.Canceled) {
			return true, interrupted()
		}
		code := exitcode.Timeout
		if src.failingNow() {
			code = exitcode.Transient
		}
		return true, unconfirmed(code, "the health deadline passed before a hard refresh could confirm it")
	}
	r.log("%v; confirming with a hard refresh in %s", verdict, r.t.confirmDelay)
	delay := r.t.confirmDelay
	for {
		if err := sleep(ctx, delay); err != nil {
			return deadlinePassed()
		}
		t := src.ticket()
		var fresh *argocd.Application
		err := r.call(ctx, "hard refresh application "+name, func(ctx context.Context) (err error) {
			fresh, err = r.c.HardRefresh(ctx, name)
			return err
		})
		if argocd.IsNotFound(err) {
			return true, fail(exitcode.Failure, "application %s was deleted while waiting for its health", name)
		}
		if err != nil && ctx.Err() != nil {
			return deadlinePassed()
		}
		if err != nil {
			return true, unconfirmed(exitcode.Transient, "the hard refresh to confirm it failed: "+err.Error())
		}
		if !src.answer(fresh, t) {
			r.log("the answer to the hard refresh of %s is no newer than what the step had seen; asking again", name)
			delay = r.t.refreshRetry
			continue
		}
		if s.newOurs(fresh) {
			return true, errOursAgain
		}
		done, confirmed := r.judge(ctx, fresh, o.AllowSuspended, res)
		if done || confirmed != nil {
			return true, confirmed
		}
		res.Note("a momentary failing health was not confirmed by a hard refresh (now %s)", healthOf(fresh))
		r.log("%s is %s on the hard refresh: the failure was momentary; waiting on", name, healthOf(fresh))
		return false, nil
	}
}

// refreshForHealth asks Argo CD for refreshes in the background while the
// step waits for health: back to back while the newest view is not proven
// fresh (each answer raises the proof by a level, fresh.go), then every
// progressRefresh while the app is not Healthy. Argo CD reassesses an app
// when its resources change, but Argo CD 3 ignores some status-only updates
// (resource.ignoreResourceUpdatesEnabled): on the e2e cluster a CRD's
// "established" condition never reached the app, which stayed Progressing
// for minutes, until the next refresh. A view that reports Healthy while
// resources the sync created are not observed yet (notYetObserved) gets a
// hard refresh instead: there Argo CD's cache, not its assessment, is
// behind; on the e2e cluster a re-created CRD stayed unobserved for minutes
// under normal refreshes and appeared at the first hard one (issue 24). The
// returned func stops it and waits for it.
func (r *runner) refreshForHealth(ctx context.Context, src *appSource) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		delay := r.t.backoffInitial
		waited := time.Duration(0)
		for ctx.Err() == nil {
			v := src.current()
			if v.gone() {
				return
			}
			hard := false
			if v.fresh {
				if sleep(ctx, r.t.progressRefresh) != nil {
					return
				}
				waited += r.t.progressRefresh
				v = src.current()
				if v.gone() {
					continue
				}
				if missing := notYetObserved(v.app); len(missing) > 0 {
					hard = true
					r.log("%s still has %s not observed after %s; asking for a hard refresh", src.name, strings.Join(missing, ", "), waited)
				} else if v.app.Status.Health.Status == appstatus.Healthy {
					continue
				} else {
					r.log("%s is still %s after %s; asking for a refresh%s", src.name, healthOf(v.app), waited, notHealthy(v.app))
				}
			}
			t := src.ticket()
			refresh := r.c.Refresh
			if hard {
				refresh = r.c.HardRefresh
			}
			app, err := refresh(ctx, src.name)
			switch {
			case ctx.Err() != nil:
				return
			case argocd.IsNotFound(err):
				src.publish(nil)
				return
			case err != nil:
				if !src.fault(err) {
					return
				}
				r.log("refresh of %s: %v (retrying)", src.name, err)
				if sleep(ctx, jitter(delay)) != nil {
					return
				}
				delay = min(2*delay, r.t.backoffMax)
				continue
			}
			src.ok()
			delay = r.t.backoffInitial
			if !src.answer(app, t) && !v.fresh {
				r.log("the answer to the refresh of %s is no newer than what the step had seen; asking again", src.name)
				if sleep(ctx, r.t.refreshRetry) != nil {
					return
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// judge decides on one fresh view: done (Healthy, or Suspended when allowed),
// keep waiting (Progressing, not yet assessed), or fail.
func (r *runner) judge(ctx context.Context, app *argocd.Application, allowSuspended bool, res *stepresult.SyncResult) (bool, error) {
	h := app.Status.Health
	res.Health, res.HealthMessage, res.SyncStatus = h.Status, h.Message, app.Status.Sync.Status
	name := app.Metadata.Name
	switch h.Status {
	case appstatus.Healthy:
		if missing := notYetObserved(app); len(missing) > 0 {
			r.log("%s reports Healthy while OutOfSync with %s not observed yet: waiting for the reconciliation that sees them", name, strings.Join(missing, ", "))
			return false, nil
		}
		stamp(&res.Timings.HealthyAt)
		r.log("%s is Healthy (sync status %s)", name, app.Status.Sync.Status)
		return true, nil
	case appstatus.Progressing, "":
		return false, nil
	case appstatus.Suspended:
		if allowSuspended {
			stamp(&res.Timings.HealthyAt)
			res.Note("Suspended accepted (--allow-suspended)")
			return true, nil
		}
		return false, fail(exitcode.Failure, "application %s is Suspended%s (pass --allow-suspended if that is expected)", name, withMessage(h.Message))
	case appstatus.Degraded:
		res.DegradedResources = r.unhealthyResources(ctx, app, appstatus.Degraded)
		return false, fail(exitcode.Failure, "application %s is Degraded after its sync%s; degraded resources: %s",
			name, withMessage(h.Message), listIssues(res.DegradedResources))
	case appstatus.Missing:
		res.DegradedResources = r.unhealthyResources(ctx, app, appstatus.Missing)
		return false, fail(exitcode.Failure, "application %s is Missing after its sync: its resources do not exist in the cluster; missing: %s",
			name, listIssues(res.DegradedResources))
	case appstatus.Unknown:
		return false, fail(exitcode.Failure, "health of application %s is Unknown after its sync%s%s", name, withMessage(h.Message), conditions(app))
	}
	return false, fail(exitcode.Failure, "application %s reports an unknown health %q", name, h.Status)
}

// notYetObserved names the resources of an OutOfSync app that Argo CD
// reports Missing. Argo CD 3.6 writes such a view right after a sync that
// created them, before its cache has seen them, and aggregates it as
// Healthy; the next reconciliation says Progressing (e2e steps 9 and 12
// caught a node finishing on it, 2026-11-26). A fresh view is no proof
// against this: the cache, not the reconciliation, is behind.
func notYetObserved(app *argocd.Application) []string {
	if app.Status.Sync.Status != appstatus.OutOfSync {
		return nil
	}
	var out []string
	for _, rs := range app.Status.Resources {
		if rs.Status == appstatus.OutOfSync && !rs.Hook && rs.Health != nil && rs.Health.Status == appstatus.Missing {
			out = append(out, rs.Kind+" "+rs.Name)
		}
	}
	return out
}

// unhealthyResources lists resources with the given health: the directly
// managed ones from status.resources, then their children (Pods, ...) from
// the resource tree, which usually say why. The tree is best effort: the
// verdict is already made.
func (r *runner) unhealthyResources(ctx context.Context, app *argocd.Application, code appstatus.Health) []stepresult.Issue {
	var out []stepresult.Issue
	var seen []argocd.ResourceRef
	for _, rs := range app.Status.Resources {
		if rs.Health != nil && rs.Health.Status == code {
			out = append(out, issue(rs.Ref(), string(code), rs.Health.Message))
			seen = append(seen, rs.Ref())
		}
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tree, err := r.c.ResourceTree(tctx, app.Metadata.Name)
	if err != nil {
		return out
	}
nodes:
	for _, n := range tree.Nodes {
		if n.Health == nil || n.Health.Status != code {
			continue
		}
		for _, s := range seen {
			if s.Same(n.ResourceRef) {
				continue nodes
			}
		}
		out = append(out, issue(n.ResourceRef, string(code), n.Health.Message))
	}
	return out
}

func listIssues(issues []stepresult.Issue) string {
	if len(issues) == 0 {
		return "none listed by Argo CD"
	}
	s := make([]string, len(issues))
	for i, is := range issues {
		s[i] = is.String()
	}
	return strings.Join(s, "; ")
}

func withMessage(m string) string {
	if m == "" {
		return ""
	}
	return " (" + m + ")"
}

func conditions(app *argocd.Application) string {
	var s []string
	for _, c := range app.Status.Conditions {
		s = append(s, c.Type+": "+c.Message)
	}
	if len(s) == 0 {
		return ""
	}
	return "; conditions: " + strings.Join(s, "; ")
}

func healthOf(app *argocd.Application) string {
	if app == nil || app.Status.Health.Status == "" {
		return "not assessed"
	}
	return string(app.Status.Health.Status)
}

// notHealthy names the managed resources that are not yet Healthy.
func notHealthy(app *argocd.Application) string {
	if app == nil {
		return ""
	}
	var s []string
	for _, rs := range app.Status.Resources {
		if rs.Health != nil && rs.Health.Status != appstatus.Healthy {
			s = append(s, issue(rs.Ref(), string(rs.Health.Status), rs.Health.Message).String())
		}
	}
	if len(s) == 0 {
		return withMessage(app.Status.Health.Message)
	}
	return "; waiting for: " + strings.Join(s, "; ")
}
