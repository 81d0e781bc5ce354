package step

import (
	"context"
	"errors"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
	"github.com/deployctl/deployctl/pkg/step/check"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// Extra checks run after the application is Healthy, within the same health
// deadline. They are readiness probes: each is retried every checkInterval
// until it passes; a check that has not passed by the deadline fails the step
// (exit 1), except that a resource check whose node is Degraded fails at once.

// runChecks runs every check until all have passed.
func (r *runner) runChecks(ctx context.Context, app string, checks []check.Check, res *stepresult.SyncResult) error {
	if len(checks) == 0 {
		return nil
	}
	results := make([]stepresult.CheckResult, len(checks))
	apiErrs := make([]error, len(checks))
	for i, c := range checks {
		results[i].Check = c.String()
	}
	res.Checks = results
	for {
		pending := 0
		for i, c := range checks {
			if results[i].Passed {
				continue
			}
			state, detail, apiErr := r.attempt(ctx, c, app)
			results[i].Attempts++
			results[i].Detail, apiErrs[i] = detail, apiErr
			switch state {
			case check.Passed:
				results[i].Passed = true
				r.log("check %s passed: %s", c, detail)
			case check.Failed:
				return fail(exitcode.Failure, "check %s failed: %s", c, detail)
			default:
				pending++
			}
		}
		if pending == 0 {
			return nil
		}
		if err := sleep(ctx, r.t.checkInterval); err != nil {
			if errors.Is(err, context.Canceled) {
				return interrupted()
			}
			for i := range checks {
				if !results[i].Passed {
					if apiErrs[i] != nil {
						return fail(exitcode.Transient, "check %s: the Argo CD API was failing when the health deadline passed: %v", checks[i], apiErrs[i])
					}
					return fail(exitcode.Failure, "check %s did not pass before the health deadline; last: %s", checks[i], results[i].Detail)
				}
			}
		}
	}
}

// attempt runs c once. apiErr is set when Argo CD could not be asked
// (transient): a deadline then is an API fault, not a failed check.
func (r *runner) attempt(ctx context.Context, c check.Check, app string) (state check.State, detail string, apiErr error) {
	h, ok := c.(*check.HTTP)
	if ok {
		state, detail := h.Attempt(ctx, r.requestTimeout)
		return state, detail, nil
	}
	rc := c.(*check.Resource)
	tree, err := r.c.ResourceTree(ctx, app)
	if err != nil {
		if argocd.IsTransient(err) || argocd.IsAuth(err) {
			return check.Waiting, err.Error(), err
		}
		return check.Failed, err.Error(), nil
	}
	for _, n := range tree.Nodes {
		if !n.Same(rc.Ref) {
			continue
		}
		switch {
		case n.Health == nil:
			return check.Passed, "present (no health assessment for this kind)", nil
		case n.Health.Status == appstatus.Healthy:
			return check.Passed, string(appstatus.Healthy), nil
		case n.Health.Status == appstatus.Degraded:
			return check.Failed, string(appstatus.Degraded) + withMessage(n.Health.Message), nil
		default:
			return check.Waiting, string(n.Health.Status) + withMessage(n.Health.Message), nil
		}
	}
	return check.Waiting, "not in the application's resource tree", nil
}
