package insight

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deployctl/deployctl/pkg/dag"
)

func loadValidate(t *testing.T, wf *wfv1.Workflow) *Run {
	t.Helper()
	r, err := Load(context.Background(), clients([]runtime.Object{wf}), Options{Namespace: "argo", Workflow: wf.Name, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// status of a validate run is what its steps read: every app's verdict,
// health and sync, and the aggregate, from the tasks' step results (a
// failed task's from its attempt). Before issue 27 it printed a blank
// summary and a header-only table: the run's tasks are stacks, not apps.
func TestStatusOfAValidateRun(t *testing.T) {
	wf := workflow(t, "testdata/validate-run.yaml", minimal(t).WorkflowTemplates[dag.Validate])
	r := loadValidate(t, wf)
	v := r.Validation
	if v == nil || v.Aggregate != "Degraded" || len(v.Apps) != 4 {
		t.Fatalf("validation %+v, want Degraded over 4 apps", v)
	}
	var got []string
	for _, a := range v.Apps {
		got = append(got, a.Task+"/"+a.App+"="+a.Verdict+":"+string(a.SyncStatus)+"/"+string(a.Health))
	}
	if want := "apps/database=Degraded:Synced/Degraded apps/web=Healthy:OutOfSync/Healthy base/cert-manager=Healthy:Synced/Healthy base/ingress-nginx=Healthy:Synced/Healthy"; strings.Join(got, " ") != want {
		t.Errorf("apps\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	var out bytes.Buffer
	if err := r.WriteStatus(&out, "text"); err != nil {
		t.Fatal(err)
	}
	want := "validate of minimal: workflow argo/minimal-validate-v1 Failed after 6.0s (child 'minimal-validate-v1-2' failed)\n" +
		"  aggregate Degraded · 1 Degraded · 3 Healthy\n\n" +
		"APP                          VERDICT                    TIME  ARGO CD (sync/health) · WHY\n" +
		"database                     Degraded                   6.0s  Synced/Degraded: 0/1 ready\n" +
		"web                          Healthy                    6.0s  OutOfSync/Healthy\n" +
		"cert-manager                 Healthy                    5.0s  Synced/Healthy\n" +
		"ingress-nginx                Healthy                    5.0s  Synced/Healthy\n"
	if out.String() != want {
		t.Errorf("status\n got %q\nwant %q", out.String(), want)
	}
	out.Reset()
	if err := r.WriteStatus(&out, "json"); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Validation struct {
			Aggregate string
			Apps      []struct{ Task, App, Verdict, SyncStatus, Health, HealthMessage string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil || j.Validation.Aggregate != "Degraded" || len(j.Validation.Apps) != 4 ||
		j.Validation.Apps[0].HealthMessage != "0/1 ready" || j.Validation.Apps[0].Task != "apps" {
		t.Errorf("json %+v %v\n%s", j, err, out.String())
	}
	if _, err := r.Explain("database"); err == nil || !strings.Contains(err.Error(), "is a validate run") {
		t.Errorf("explain of a validate run: %v", err)
	}
}

// While a task runs, its apps have no verdict and the aggregate is not
// known; once the run is over, apps a task never read make it Failed.
func TestStatusOfAValidateRunWithoutResults(t *testing.T) {
	wf := workflow(t, "testdata/validate-run.yaml", minimal(t).WorkflowTemplates[dag.Validate])
	wf.Status.Phase, wf.Status.FinishedAt, wf.Status.Message = wfv1.WorkflowRunning, wfv1.Workflow{}.Status.FinishedAt, ""
	for _, id := range []string{"minimal-validate-v1-2", "minimal-validate-v1-21"} {
		n := wf.Status.Nodes[id]
		n.Phase, n.Outputs, n.Message, n.FinishedAt = wfv1.NodeRunning, nil, "", wfv1.Workflow{}.Status.FinishedAt
		wf.Status.Nodes[id] = n
	}
	r := loadValidate(t, wf)
	if r.Validation.Aggregate != "" {
		t.Errorf("aggregate %q while apps checks", r.Validation.Aggregate)
	}
	var out bytes.Buffer
	if err := r.WriteStatus(&out, "text"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  aggregate not known yet · 2 not read (checking) · 2 Healthy\n",
		"database                     checking                   5m0s  not read: task apps checking\n",
		"cert-manager                 Healthy                    5.0s  Synced/Healthy\n",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("status lacks %q:\n%s", line, out.String())
		}
	}
	// The run ended, the task's pod never wrote a result (the template's
	// default "{}"): its apps were not validated.
	wf.Status.Phase = wfv1.WorkflowError
	n := wf.Status.Nodes["minimal-validate-v1-2"]
	n.Phase, n.Message = wfv1.NodeError, "pod deleted"
	empty := wfv1.AnyString("{}")
	n.Outputs = &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: "result", Value: &empty}}}
	wf.Status.Nodes["minimal-validate-v1-2"] = n
	r = loadValidate(t, wf)
	out.Reset()
	_ = r.WriteStatus(&out, "text")
	if r.Validation.Aggregate != "Failed" || !strings.Contains(out.String(), "web                          failed") ||
		!strings.Contains(out.String(), "not read: task apps failed: pod deleted") {
		t.Errorf("aggregate %q:\n%s", r.Validation.Aggregate, out.String())
	}
}
