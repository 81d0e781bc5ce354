package step

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// Argo CD 3.6 can aggregate a just-synced app as Healthy while the
// Deployment it created is still Missing from its cache (OutOfSync): that
// view is not a verdict. A Healthy, Synced view is; so is a Healthy app
// OutOfSync for another reason (a drifting ConfigMap has no health).
func TestHealthyWhileResourcesNotObservedWaits(t *testing.T) {
	r := &runner{log: func(string, ...any) {}}
	app := func(sync appstatus.Sync, res ...argocd.ResourceStatus) *argocd.Application {
		a := &argocd.Application{}
		a.Metadata.Name = "gateway"
		a.Status.Health.Status = appstatus.Healthy
		a.Status.Sync.Status = sync
		a.Status.Resources = res
		return a
	}
	missing := argocd.ResourceStatus{Group: "apps", Kind: "Deployment", Name: "gateway", Status: appstatus.OutOfSync, Health: &argocd.HealthStatus{Status: appstatus.Missing}}
	service := argocd.ResourceStatus{Kind: "Service", Name: "gateway", Status: appstatus.Synced, Health: &argocd.HealthStatus{Status: appstatus.Healthy}}
	drift := argocd.ResourceStatus{Kind: "ConfigMap", Name: "settings", Status: appstatus.OutOfSync}
	for name, c := range map[string]struct {
		app  *argocd.Application
		done bool
	}{
		"created, not yet in the cache": {app(appstatus.OutOfSync, service, missing), false},
		"synced":                        {app(appstatus.Synced, service), true},
		"drifting ConfigMap":            {app(appstatus.OutOfSync, service, drift), true},
	} {
		done, err := r.judge(context.Background(), c.app, false, &stepresult.SyncResult{})
		if err != nil || done != c.done {
			t.Errorf("%s: judge = %v, %v; want %v, nil", name, done, err, c.done)
		}
	}
}

// When the cache, not the assessment, is behind (a re-created CRD on Argo
// CD 3.6, e2e step 14): normal refreshes keep showing the app Healthy,
// OutOfSync with what the sync created Missing; the step asks for a hard
// refresh, which shows it, and finishes then, not at its health deadline.
func TestUnobservedResourcesGetAHardRefresh(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, after: hs(healthy), resync: 20 * time.Millisecond, cacheBehind: true})
	o := startSyncAndWait(t, f, testTiming(), "--health-timeout", "5s")()
	expect(t, o, exitcode.OK)
	if f.count("hard-refresh") == 0 || !strings.Contains(o.stderr, "asking for a hard refresh") {
		t.Errorf("hard refreshes %d; stderr:\n%s", f.count("hard-refresh"), o.stderr)
	}
}
