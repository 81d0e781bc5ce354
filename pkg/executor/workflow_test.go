package executor

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/argoproj/argo-workflows/v3/workflow/packer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/executor/internal/workflow"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/livestate/livestatetest"
	"github.com/deployctl/deployctl/pkg/report"
)

// Argo's retry resets exactly the failed node and what never ran; the
// succeeded apps keep their state, so they are not synced again.
func TestPlanRetry(t *testing.T) {
	w := livestatetest.FailedDeploy(t)
	plan, err := workflow.PlanRetry(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"database", "web"}; !reflect.DeepEqual(plan.Reset, want) {
		t.Errorf("reset %v, want %v", plan.Reset, want)
	}
	if plan.Workflow.Status.Phase != wfv1.WorkflowRunning {
		t.Errorf("retried run is %s, want Running", plan.Workflow.Status.Phase)
	}
	// Argo Workflows 3.6 set one of the join's dependencies (picked by map
	// order) back to Running, and nothing visited it again: the run hung
	// (argoproj/argo-workflows#14796). The linked 3.7 must keep it as it
	// was. Try several times: 3.6's pick was random.
	for i := 0; i < 20; i++ {
		plan, err := workflow.PlanRetry(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		after := livestate.TaskNodes(plan.Workflow)
		for _, kept := range []string{"cert-manager", "ingress-nginx", "base"} {
			if n := after[kept]; n == nil || n.Phase != wfv1.NodeSucceeded || !n.FinishedAt.Equal(&livestate.TaskNodes(w)[kept].FinishedAt) {
				t.Fatalf("%s must stay Succeeded as it was: %+v", kept, n)
			}
		}
	}
	if len(plan.PodsToDelete) != 1 {
		t.Errorf("pods to delete %v, want the failed database attempt's", plan.PodsToDelete)
	}
	if w.Status.Phase != wfv1.WorkflowFailed {
		t.Error("planning must not touch the run it plans from")
	}
	refs := []compRef{{task: "cert-manager"}, {task: "ingress-nginx"}, {task: "database"}, {task: "web"}}
	if got := keptTasks(w, plan.Reset, refs); !reflect.DeepEqual(got, []string{"cert-manager", "ingress-nginx"}) {
		t.Errorf("kept %v", got)
	}
	if got := visible(append(plan.Reset, "base"), refs); !reflect.DeepEqual(got, []string{"database", "web"}) {
		t.Errorf("visible %v", got)
	}

	w.Status.Phase = wfv1.WorkflowRunning
	if _, err := workflow.PlanRetry(context.Background(), w); err == nil {
		t.Error("a running workflow cannot be retried")
	}
}

// resume deletes the failed attempt's pod, then writes the retried run
// through the Workflow API, as `argo retry` does.
func TestResumeUpdatesTheRun(t *testing.T) {
	w := livestatetest.FailedDeploy(t)
	wfs := wffake.NewSimpleClientset(w)
	kc := kubefake.NewSimpleClientset()
	updated, plan, err := workflow.Resume(context.Background(), &kube.Clients{Workflows: wfs, Kube: kc}, w)
	if err != nil {
		t.Fatal(err)
	}
	if updated.Status.Phase != wfv1.WorkflowRunning || len(plan.Reset) != 2 {
		t.Errorf("phase %s, reset %v", updated.Status.Phase, plan.Reset)
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
	w := livestatetest.FailedDeploy(t)
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

// A run Argo compressed (a platform of about 350 apps and more: its nodes
// in status.compressedNodes) is resumed as one that is not: the same nodes
// reset; and the run written back is compressed again when it would pass
// the maximum size, as Argo's server does.
func TestResumeACompressedRun(t *testing.T) {
	plain := livestatetest.FailedDeploy(t)
	w := livestatetest.Compressed(t, plain)
	plan, err := workflow.PlanRetry(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"database", "web"}; !reflect.DeepEqual(plan.Reset, want) || len(plan.PodsToDelete) != 1 {
		t.Errorf("reset %v, pods %v: want %v and the failed attempt's pod", plan.Reset, plan.PodsToDelete, want)
	}
	b, _ := json.Marshal(plan.Workflow)
	defer packer.SetMaxWorkflowSize(len(b) - 1)()
	wfs := wffake.NewSimpleClientset(w)
	if _, _, err := workflow.Resume(context.Background(), &kube.Clients{Workflows: wfs, Kube: kubefake.NewSimpleClientset()}, w); err != nil {
		t.Fatal(err)
	}
	stored, err := wfs.ArgoprojV1alpha1().Workflows("argo").Get(context.Background(), w.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status.CompressedNodes == "" || len(stored.Status.Nodes) != 0 {
		t.Fatal("the resumed run was written back uncompressed past the maximum size")
	}
	if err := livestate.Hydrate(stored); err != nil {
		t.Fatal(err)
	}
	if n := livestate.TaskNodes(stored); n["cert-manager"] == nil || n["cert-manager"].Phase != wfv1.NodeSucceeded || n["database"] != nil && n["database"].Phase == wfv1.NodeFailed {
		t.Errorf("stored nodes: %v", n)
	}
}

// The executor follows and reports a compressed run from its nodes: the
// failed app, what did not run, what succeeded.
func TestFollowACompressedRun(t *testing.T) {
	r, _ := inlineRunFor(t, ActionDeploy, SubmitReference)
	w := livestatetest.Compressed(t, livestatetest.FailedDeploy(t))
	r.cl.Workflows = wffake.NewSimpleClientset(w)
	r.report.Workflow = &report.WorkflowRun{Namespace: "argo", Name: w.Name}
	_, ended, _, _, err := r.followRun(context.Background(), w, r.componentRefs(dag.Deploy), dag.Deploy, nil)
	if ended || err != nil {
		t.Fatalf("ended %v: %v", ended, err)
	}
	got := map[string]string{}
	for _, c := range r.report.Components {
		got[c.Name] = c.Status
	}
	if got["database"] != string(wfv1.NodeFailed) || got["web"] != report.CompNotRun || got["cert-manager"] != string(wfv1.NodeSucceeded) {
		t.Errorf("components %v", got)
	}
}

// A run whose node status Argo offloaded to its database (E2E_OFFLOAD,
// 2,000 apps) has no node in the object: every component says so and
// names `argo get`, instead of "not run".
func TestReportAnOffloadedRun(t *testing.T) {
	r, _ := inlineRunFor(t, ActionDeploy, SubmitReference)
	w := livestatetest.FailedDeploy(t)
	w.Status.Phase, w.Status.Nodes, w.Status.OffloadNodeStatusVersion = wfv1.WorkflowSucceeded, nil, "fnv:1"
	r.fromWorkflow(w, r.componentRefs(dag.Deploy), dag.Deploy, nil)
	if len(r.report.Components) == 0 {
		t.Fatal("no components")
	}
	for _, c := range r.report.Components {
		if c.Status != report.CompOffloaded || !strings.Contains(c.Message, "argo get "+w.Name) {
			t.Errorf("%s: %s %q", c.Name, c.Status, c.Message)
		}
	}
}
