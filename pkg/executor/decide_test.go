package executor

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate"
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
			d := decide(tc.runs, tc.action, h, tc.force, tc.upToDate)
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

func loadWorkflow(t *testing.T, path string) *wfv1.Workflow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w wfv1.Workflow
	if err := yaml.UnmarshalStrict(b, &w); err != nil {
		t.Fatal(err)
	}
	return &w
}

// Argo's retry resets exactly the failed node and what never ran; the
// succeeded apps keep their state, so they are not synced again.
func TestPlanRetry(t *testing.T) {
	w := loadWorkflow(t, "testdata/workflows/failed-deploy.yaml")
	plan, err := planRetry(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"database", "web"}; !reflect.DeepEqual(plan.reset, want) {
		t.Errorf("reset %v, want %v", plan.reset, want)
	}
	if plan.wf.Status.Phase != wfv1.WorkflowRunning {
		t.Errorf("retried run is %s, want Running", plan.wf.Status.Phase)
	}
	// Argo Workflows 3.6 set one of the join's dependencies (picked by map
	// order) back to Running, and nothing visited it again: the run hung
	// (argoproj/argo-workflows#14796). The linked 3.7 must keep it as it
	// was. Try several times: 3.6's pick was random.
	for i := 0; i < 20; i++ {
		plan, err := planRetry(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		after := livestate.TaskNodes(plan.wf)
		for _, kept := range []string{"cert-manager", "ingress-nginx", "base"} {
			if n := after[kept]; n == nil || n.Phase != wfv1.NodeSucceeded || !n.FinishedAt.Equal(&livestate.TaskNodes(w)[kept].FinishedAt) {
				t.Fatalf("%s must stay Succeeded as it was: %+v", kept, n)
			}
		}
	}
	if len(plan.podsToDel) != 1 {
		t.Errorf("pods to delete %v, want the failed database attempt's", plan.podsToDel)
	}
	if w.Status.Phase != wfv1.WorkflowFailed {
		t.Error("planning must not touch the run it plans from")
	}
	refs := []compRef{{task: "cert-manager"}, {task: "ingress-nginx"}, {task: "database"}, {task: "web"}}
	if got := keptTasks(w, plan.reset, refs); !reflect.DeepEqual(got, []string{"cert-manager", "ingress-nginx"}) {
		t.Errorf("kept %v", got)
	}
	if got := visible(append(plan.reset, "base"), refs); !reflect.DeepEqual(got, []string{"database", "web"}) {
		t.Errorf("visible %v", got)
	}

	w.Status.Phase = wfv1.WorkflowRunning
	if _, err := planRetry(context.Background(), w); err == nil {
		t.Error("a running workflow cannot be retried")
	}
}

// resume deletes the failed attempt's pod, then writes the retried run
// through the Workflow API, as `argo retry` does.
func TestResumeUpdatesTheRun(t *testing.T) {
	w := loadWorkflow(t, "testdata/workflows/failed-deploy.yaml")
	wfs := wffake.NewSimpleClientset(w)
	kc := kubefake.NewSimpleClientset()
	r := &run{cl: &kube.Clients{Workflows: wfs, Kube: kc}}
	updated, plan, err := r.resume(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if updated.Status.Phase != wfv1.WorkflowRunning || len(plan.reset) != 2 {
		t.Errorf("phase %s, reset %v", updated.Status.Phase, plan.reset)
	}
	stored, err := wfs.ArgoprojV1alpha1().Workflows("argo").Get(context.Background(), w.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := livestate.TaskNodes(stored); n["cert-manager"].Phase != wfv1.NodeSucceeded || n["database"] != nil && n["database"].Phase == wfv1.NodeFailed {
		t.Errorf("stored nodes: cert-manager %v, database %v", n["cert-manager"], n["database"])
	}
	var deletes int
	for _, a := range kc.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("%d pod deletions, want 1", deletes)
	}
}

func TestResultOf(t *testing.T) {
	w := loadWorkflow(t, "testdata/workflows/failed-deploy.yaml")
	nodes := livestate.TaskNodes(w)
	if len(nodes) != 5 {
		t.Errorf("task nodes %d, want 5 (4 apps and the join)", len(nodes))
	}
	// A failed Retry node has no output: the last attempt's is used.
	res := livestate.ResultOf(w, nodes["database"])
	if res == nil || res.Health != "Degraded" || len(res.DegradedResources) != 1 {
		t.Fatalf("database result: %+v", res)
	}
	d := stepDiagnostics(res)
	if len(d) != 3 || !strings.Contains(d[2], "StatefulSet app/database (Degraded: 0/1 ready)") {
		t.Errorf("diagnostics %q", d)
	}
	if livestate.ResultOf(w, nodes["web"]) != nil {
		t.Error("an omitted node has no result")
	}
	if r := livestate.ResultOf(w, nodes["cert-manager"]); r == nil || r.Health != "Healthy" {
		t.Errorf("cert-manager result %+v", r)
	}
}
