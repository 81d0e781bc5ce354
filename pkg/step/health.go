package step

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// The stale-Healthy trap. Right after a sync Argo CD still reports the health
// of the last reconciliation before it (Kargo #2196, argo-cd #22741): the
// operation's end is written first and the health only by a later
// reconciliation, and a reconciliation that began during the sync can finish
// after it with pre-sync health. A just-created app likewise reports Missing
// until its resources are applied.
//
// Timestamps cannot settle this: reconciledAt and finishedAt travel as whole
// seconds, so "reconciledAt > finishedAt" either waits for a reconciliation in
// a later second (up to the 3-minute resync) or, with ">=", trusts one from
// the same second that began before the operation ended.
//
// So the step uses Argo CD's refresh handshake. Once it has seen its own
// operation finish it calls GET ?refresh=normal. The API server sets the
// refresh annotation and answers only with an update that no longer carries
// it, and the controller removes the annotation only in a reconciliation that
// read it — one that started after the request, hence after the operation
// finished. Health is judged from that answer and from later updates;
// nothing seen before it counts, and no clock is compared. (Checked against
// the v2.14 sources: server Get and controller persistAppStatus.) As a
// sanity check the answer's reconciledAt must not precede the operation's
// finishedAt (same controller clock); if it does, the refresh is repeated.

// One fresh reconciliation can still be wrong for a moment: a CRD applied by
// the sync is Degraded ("not established") until the apiserver serves it, an
// app whose resources were just created can be Missing until the
// controller's watch delivers them, and Argo CD 3 keeps judging a re-created
// CRD from its cache until a hard refresh. So a failing verdict is confirmed
// once more, confirmDelay later, from a hard refresh; the step fails only if
// that agrees. A real failure costs confirmDelay (seconds, against health
// timeouts of minutes); a momentary one costs nothing.

// awaitFreshHealth waits until health observed after our operation decides
// the outcome: Healthy passes; Progressing waits until ctx's deadline;
// Degraded, Missing, Unknown (and Suspended unless allowed) fail once
// confirmed.
func (r *runner) awaitFreshHealth(ctx context.Context, src *appSource, o syncOpts, op *argocd.OperationState, res *syncResult) error {
	name := src.name
	fresh, err := r.refreshAfter(ctx, src, o, op)
	if err != nil {
		return err
	}
	// The source never steps back to an older resourceVersion (Argo CD
	// itself treats them as integers), so once the answer is offered every
	// view wait shows is the answer or newer.
	src.offer(fresh)
	r.log("judging the health of %s from the reconciliation after the sync (resourceVersion %s)", name, fresh.Metadata.ResourceVersion)
	for {
		done, verdict := r.judge(ctx, fresh, o.allowSuspended, res)
		if done {
			return nil
		}
		if verdict == nil {
			stopRefreshing := r.refreshWhileProgressing(ctx, src)
			err := src.wait(ctx, func(v view) (bool, error) {
				if v.gone() {
					return false, fail(ExitFailed, "application %s was deleted while waiting for its health", name)
				}
				done, verr := r.judge(ctx, v.app, o.allowSuspended, res)
				verdict = verr
				return done || verr != nil, nil
			})
			stopRefreshing()
			if err == errWaitDeadline {
				last := src.current().app
				return src.deadlineError("application %s is still %s %s after its sync%s", name, healthOf(last), o.healthTimeout, notHealthy(last))
			}
			if err != nil || verdict == nil {
				return err
			}
		}
		r.log("%v; confirming with a hard refresh in %s", verdict, r.t.confirmDelay)
		if sleep(ctx, r.t.confirmDelay) != nil {
			return verdict
		}
		err := r.call(ctx, "hard refresh application "+name, func(ctx context.Context) (err error) {
			fresh, err = r.c.HardRefresh(ctx, name)
			return err
		})
		if argocd.IsNotFound(err) {
			return fail(ExitFailed, "application %s was deleted while waiting for its health", name)
		}
		if err != nil {
			return verdict
		}
		src.offer(fresh)
		if done, confirmed := r.judge(ctx, fresh, o.allowSuspended, res); done || confirmed != nil {
			return confirmed
		}
		res.note("a momentary failing health was not confirmed by a hard refresh (now %s)", healthOf(fresh))
		r.log("%s is %s on the hard refresh: the failure was momentary; waiting on", name, healthOf(fresh))
	}
}

// refreshWhileProgressing asks for a refresh every progressRefresh while the
// app is not Healthy. Argo CD reassesses an app when its resources change,
// but Argo CD 3 ignores some status-only updates (resource.
// ignoreResourceUpdatesEnabled): on the e2e cluster a CRD's "established"
// condition never reached the app, which stayed Progressing for minutes,
// until the next refresh. One refresh per interval per waiting app is cheap.
func (r *runner) refreshWhileProgressing(ctx context.Context, src *appSource) func() {
	return r.refreshWhile(ctx, src, r.t.progressRefresh, func(v view, waited time.Duration) string {
		if v.app.Status.Health.Status == argocd.HealthHealthy {
			return ""
		}
		return fmt.Sprintf("%s is still %s after %s; asking for a refresh%s", src.name, healthOf(v.app), waited, notHealthy(v.app))
	})
}

// refreshAfter returns the application from a refresh that passes the
// sanity check below; a refresh that keeps coming back too old is repeated
// as a hard one.
func (r *runner) refreshAfter(ctx context.Context, src *appSource, o syncOpts, op *argocd.OperationState) (*argocd.Application, error) {
	name := src.name
	for attempt := 1; ; attempt++ {
		var fresh *argocd.Application
		refresh := r.c.Refresh
		if attempt > 2 {
			refresh = r.c.HardRefresh
		}
		err := r.call(ctx, "refresh application "+name, func(ctx context.Context) (err error) {
			fresh, err = refresh(ctx, name)
			return err
		})
		if argocd.IsNotFound(err) {
			return nil, fail(ExitFailed, "application %s was deleted after its sync", name)
		}
		if err != nil {
			return nil, err
		}
		if reconciledAfter(fresh, op) {
			return fresh, nil
		}
		r.log("the refreshed status of %s predates the end of the sync; refreshing again", name)
		if sleep(ctx, r.t.refreshRetry) != nil {
			return nil, src.deadlineError("no reconciliation of %s after its sync within %s", name, o.healthTimeout)
		}
	}
}

// reconciledAfter is the sanity check described above.
func reconciledAfter(app *argocd.Application, op *argocd.OperationState) bool {
	if op.FinishedAt == nil || app.Status.ReconciledAt == nil {
		return app.Status.ReconciledAt != nil
	}
	return !app.Status.ReconciledAt.Before(op.FinishedAt.Truncate(time.Second))
}

// judge decides on one fresh view: done (Healthy, or Suspended when allowed),
// keep waiting (Progressing, not yet assessed), or fail.
func (r *runner) judge(ctx context.Context, app *argocd.Application, allowSuspended bool, res *syncResult) (bool, error) {
	h := app.Status.Health
	res.Health, res.HealthMessage, res.SyncStatus = string(h.Status), h.Message, string(app.Status.Sync.Status)
	name := app.Metadata.Name
	switch h.Status {
	case argocd.HealthHealthy:
		stamp(&res.Timings.HealthyAt)
		r.log("%s is Healthy (sync status %s)", name, app.Status.Sync.Status)
		return true, nil
	case argocd.HealthProgressing, "":
		return false, nil
	case argocd.HealthSuspended:
		if allowSuspended {
			stamp(&res.Timings.HealthyAt)
			res.note("Suspended accepted (--allow-suspended)")
			return true, nil
		}
		return false, fail(ExitFailed, "application %s is Suspended%s (pass --allow-suspended if that is expected)", name, withMessage(h.Message))
	case argocd.HealthDegraded:
		res.DegradedResources = r.unhealthyResources(ctx, app, argocd.HealthDegraded)
		return false, fail(ExitFailed, "application %s is Degraded after its sync%s; degraded resources: %s",
			name, withMessage(h.Message), listIssues(res.DegradedResources))
	case argocd.HealthMissing:
		res.DegradedResources = r.unhealthyResources(ctx, app, argocd.HealthMissing)
		return false, fail(ExitFailed, "application %s is Missing after its sync: its resources do not exist in the cluster; missing: %s",
			name, listIssues(res.DegradedResources))
	case argocd.HealthUnknown:
		return false, fail(ExitFailed, "health of application %s is Unknown after its sync%s%s", name, withMessage(h.Message), conditions(app))
	}
	return false, fail(ExitFailed, "application %s reports an unknown health %q", name, h.Status)
}

// unhealthyResources lists resources with the given health: the directly
// managed ones from status.resources, then their children (Pods, ...) from
// the resource tree, which usually say why. The tree is best effort: the
// verdict is already made.
func (r *runner) unhealthyResources(ctx context.Context, app *argocd.Application, code argocd.HealthCode) []resourceIssue {
	var out []resourceIssue
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

func listIssues(issues []resourceIssue) string {
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
		if rs.Health != nil && rs.Health.Status != argocd.HealthHealthy {
			s = append(s, issue(rs.Ref(), string(rs.Health.Status), rs.Health.Message).String())
		}
	}
	if len(s) == 0 {
		return withMessage(app.Status.Health.Message)
	}
	return "; waiting for: " + strings.Join(s, "; ")
}
