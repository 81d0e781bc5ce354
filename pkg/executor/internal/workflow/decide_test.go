package workflow

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/dag"
)

func wf(name, action, hash string, phase wfv1.WorkflowPhase, age time.Duration) wfv1.Workflow {
	return wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "argo",
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).Add(-age)),
			Labels:            map[string]string{"deployctl.dev/platform": "p", "deployctl.dev/action": action, "deployctl.dev/spec-hash": hash},
		},
		Status: wfv1.WorkflowStatus{Phase: phase},
	}
}

func TestDecide(t *testing.T) {
	healthy := func() (bool, string) { return true, "all 4 apps are Healthy and Synced" }
	drifted := func() (bool, string) { return false, "web is Degraded/Synced" }
	never := func() (bool, string) { t.Fatal("upToDate must not be asked"); return false, "" }
	const h = "h1"
	for _, tc := range []struct {
		name     string
		action   dag.Action
		runs     []wfv1.Workflow
		force    bool
		upToDate func() (bool, string)
		want     string
		run      string
	}{
		{"first deploy", dag.Deploy, nil, false, never, DecideSubmit, ""},
		{"last failed, same spec: resume", dag.Deploy, []wfv1.Workflow{
			wf("d2", "deploy", h, wfv1.WorkflowFailed, time.Hour), wf("d1", "deploy", h, wfv1.WorkflowSucceeded, 2*time.Hour),
		}, false, never, DecideResume, "d2"},
		{"last errored, same spec: resume", dag.Deploy, []wfv1.Workflow{wf("d1", "deploy", h, wfv1.WorkflowError, time.Hour)}, false, never, DecideResume, "d1"},
		{"last failed, other spec: new run", dag.Deploy, []wfv1.Workflow{wf("d1", "deploy", "h0", wfv1.WorkflowFailed, time.Hour)}, false, never, DecideSubmit, ""},
		{"failed run of this spec superseded by a newer run: stale, new run", dag.Deploy, []wfv1.Workflow{
			wf("d1", "deploy", h, wfv1.WorkflowFailed, 2*time.Hour), wf("d2", "deploy", "h0", wfv1.WorkflowSucceeded, time.Hour),
		}, false, never, DecideSubmit, ""},
		{"running, same spec: follow", dag.Deploy, []wfv1.Workflow{wf("d1", "deploy", h, wfv1.WorkflowRunning, time.Minute)}, false, never, DecideFollow, "d1"},
		{"pending, same spec: follow", dag.Deploy, []wfv1.Workflow{wf("d1", "deploy", h, "", time.Minute)}, false, never, DecideFollow, "d1"},
		// The platform's mutex (compile.MutexName): a run created while
		// another holds it is Pending behind it (a Sensor's, labelled with
		// the spec hash by the template's workflowMetadata before the lock
		// is asked for). The newest unfinished run decides.
		{"pending on the mutex behind a running one, same spec: follow the newest", dag.Deploy, []wfv1.Workflow{
			wf("d1", "deploy", h, wfv1.WorkflowRunning, 2*time.Minute), wf("d2", "deploy", h, wfv1.WorkflowPending, time.Minute),
		}, false, never, DecideFollow, "d2"},
		{"pending on the mutex behind a run of another spec: conflict", dag.Deploy, []wfv1.Workflow{
			wf("d1", "deploy", h, wfv1.WorkflowRunning, 2*time.Minute), wf("d2", "deploy", "h0", wfv1.WorkflowPending, time.Minute),
		}, false, never, DecideConflict, "d2"},
		{"running, other spec: conflict", dag.Deploy, []wfv1.Workflow{wf("d1", "deploy", "h0", wfv1.WorkflowRunning, time.Minute)}, false, never, DecideConflict, "d1"},
		{"teardown running: deploy conflicts", dag.Deploy, []wfv1.Workflow{wf("t1", "teardown", h, wfv1.WorkflowRunning, time.Minute)}, false, never, DecideConflict, "t1"},
		{"validate runs do not conflict", dag.Deploy, []wfv1.Workflow{wf("v1", "validate", h, wfv1.WorkflowRunning, time.Minute)}, false, never, DecideSubmit, ""},
		{"succeeded and healthy: skip", dag.Deploy, []wfv1.Workflow{
			wf("d2", "deploy", h, wfv1.WorkflowSucceeded, time.Hour), wf("d1", "deploy", h, wfv1.WorkflowFailed, 2*time.Hour),
		}, false, healthy, DecideSkip, "d2"},
		{"succeeded but drifted: new run", dag.Deploy, []wfv1.Workflow{wf("d1", "deploy", h, wfv1.WorkflowSucceeded, time.Hour)}, false, drifted, DecideSubmit, "d1"},
		{"succeeded and healthy, forced: new run", dag.Deploy, []wfv1.Workflow{wf("d1", "deploy", h, wfv1.WorkflowSucceeded, time.Hour)}, true, never, DecideSubmit, "d1"},
		{"teardown after a failed teardown: new run", dag.Teardown, []wfv1.Workflow{wf("t1", "teardown", h, wfv1.WorkflowFailed, time.Hour)}, false, never, DecideSubmit, ""},
		{"teardown running: follow", dag.Teardown, []wfv1.Workflow{wf("t1", "teardown", h, wfv1.WorkflowRunning, time.Hour)}, false, never, DecideFollow, "t1"},
		{"deploy running: teardown conflicts", dag.Teardown, []wfv1.Workflow{wf("d1", "deploy", h, wfv1.WorkflowRunning, time.Hour)}, false, never, DecideConflict, "d1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.runs, tc.action, h, tc.force, tc.upToDate)
			got := ""
			if d.Run != nil {
				got = d.Run.Name
			}
			if d.Kind != tc.want || got != tc.run {
				t.Errorf("decided %s %q (%s), want %s %q", d.Kind, got, d.Reason, tc.want, tc.run)
			}
			if d.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
}
