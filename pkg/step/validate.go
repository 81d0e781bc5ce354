package step

import (
	"context"
	"strings"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/aggregate"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/stepcontract"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// validate reads every app once (read-only) and aggregates (RFC 5.5, docs/requirements.md#rfc-55-aggregate-health): exit 0 all
// Healthy, 2 Degraded or Progressing, 1 Failed (an app absent or not
// readable), 75 when the failures were all the API being unreachable.
func (r *runner) validate(ctx context.Context, o stepcontract.Validate, res *stepresult.ValidateResult) error {
	ctx, cancel := context.WithTimeout(ctx, r.t.validateBudget)
	defer cancel()
	res.Aggregate = aggregate.Healthy
	transient, permanent := 0, 0
	for _, name := range o.Apps {
		e := stepresult.AppHealth{App: name}
		var app *argocd.Application
		err := r.call(ctx, "get application "+name, func(ctx context.Context) (err error) {
			app, err = r.c.Get(ctx, name)
			return err
		})
		switch {
		case err != nil:
			e.Verdict, e.Error = aggregate.Failed, err.Error()
			if argocd.IsNotFound(err) {
				e.Error = "the application does not exist"
			}
			if exitcode.Of(err) == exitcode.Transient {
				transient++
			} else {
				permanent++
			}
		default:
			h := app.Status.Health
			e.Verdict, e.Health, e.HealthMessage = aggregate.Verdict(h.Status), h.Status, h.Message
			e.SyncStatus, e.SyncRevision = app.Status.Sync.Status, app.Status.Sync.Revision
			if st := app.Status.OperationState; st != nil {
				e.OperationPhase = string(st.Phase)
			}
		}
		r.log("%s: %s (health %s, sync %s)%s", name, e.Verdict, orDash(e.Health), orDash(e.SyncStatus), prefixed(e.Error))
		res.Apps = append(res.Apps, e)
		res.Aggregate = aggregate.Worst(res.Aggregate, e.Verdict)
	}
	switch res.Aggregate {
	case aggregate.Healthy:
		return nil
	case aggregate.Progressing, aggregate.Degraded:
		return fail(exitcode.Partial, "%s: %s", res.Aggregate, listApps(res.Apps, res.Aggregate))
	}
	if permanent == 0 {
		return fail(exitcode.Transient, "could not read %d application(s) from the Argo CD API: %s", transient, listApps(res.Apps, aggregate.Failed))
	}
	return fail(exitcode.Failure, "Failed: %s", listApps(res.Apps, aggregate.Failed))
}

func listApps(apps []stepresult.AppHealth, v string) string {
	var s []string
	for _, a := range apps {
		if a.Verdict != v {
			continue
		}
		d := a.App
		switch {
		case a.Error != "":
			d += " (" + a.Error + ")"
		case a.HealthMessage != "":
			d += " (" + string(a.Health) + ": " + a.HealthMessage + ")"
		default:
			d += " (" + orDash(a.Health) + ")"
		}
		s = append(s, d)
	}
	return strings.Join(s, "; ")
}

func orDash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
}

func prefixed(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}
