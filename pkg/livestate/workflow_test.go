package livestate

import (
	"slices"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func result(json string) *wfv1.Outputs {
	v := wfv1.AnyString(json)
	return &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: "result", Value: &v}}}
}

func at(sec int) metav1.Time { return metav1.NewTime(time.Unix(int64(1e9+sec), 0)) }

// A Workflow as the controller records a DAG run: a Retry node per task
// with its attempts "TASK(N)" (named WORKFLOW.TASK(N) too), a Pod node of a
// task without retries, and nodes of other templates.
func retried() *wfv1.Workflow {
	wf := &wfv1.Workflow{}
	wf.Name = "p-deploy-x"
	wf.Status.Nodes = wfv1.Nodes{
		"root": {ID: "root", Name: "p-deploy-x", DisplayName: "p-deploy-x", Type: wfv1.NodeTypeDAG},
		"db": {ID: "db", Name: "p-deploy-x.db", DisplayName: "db", Type: wfv1.NodeTypeRetry, Phase: wfv1.NodeFailed,
			Children: []string{"db1", "db0", "gone"}},
		// Listed newest first: the order of Children is not the order of the attempts.
		"db1": {ID: "db1", Name: "p-deploy-x.db(1)", DisplayName: "db(1)", Type: wfv1.NodeTypePod, Phase: wfv1.NodeFailed, StartedAt: at(60),
			Outputs: result(`{"command":"sync-and-wait","exitCode":1,"message":"second"}`)},
		"db0": {ID: "db0", Name: "p-deploy-x.db(0)", DisplayName: "db(0)", Type: wfv1.NodeTypePod, Phase: wfv1.NodeFailed, StartedAt: at(0),
			Outputs: result(`{"command":"sync-and-wait","exitCode":75,"message":"first"}`)},
		"web": {ID: "web", Name: "p-deploy-x.web", DisplayName: "web", Type: wfv1.NodeTypePod, Phase: wfv1.NodeFailed,
			Outputs: result(`not json`)},
		"hook": {ID: "hook", Name: "p-deploy-x.onExit", DisplayName: "p-deploy-x.onExit", Type: wfv1.NodeTypePod},
		"sub":  {ID: "sub", Name: "p-deploy-x.web.inner", DisplayName: "inner", Type: wfv1.NodeTypePod},
	}
	return wf
}

// Tasks are the nodes named WORKFLOW.TASK whose name is a task name: a
// retry attempt "db(0)" and the exit handler "p-deploy-x.onExit" are not,
// though their node names have that shape too.
func TestTaskNodes(t *testing.T) {
	got := TaskNodes(retried())
	var names []string
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"db", "web"}) {
		t.Errorf("task nodes %q, want db and web", names)
	}
}

func TestAttemptsAndResultOf(t *testing.T) {
	wf := retried()
	nodes := TaskNodes(wf)
	var ids []string
	for _, a := range Attempts(wf, nodes["db"]) {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, []string{"db0", "db1"}) {
		t.Errorf("attempts %q, want oldest first, an absent child left out", ids)
	}
	if r := ResultOf(wf, nodes["db"]); r == nil || r.Message != "second" || r.ExitCode != 1 {
		t.Errorf("db: %+v, want the latest attempt's result", r)
	}
	if r := ResultOf(wf, nodes["web"]); r != nil {
		t.Errorf("web: %+v, want none from an output that is not a result", r)
	}
}

// MessageOf: a Retry node's verdict on retrying gives way to its latest
// attempt's message (the step's reason, in pod and plugin mode alike); a
// node that is not a Retry node, or whose attempts say nothing, keeps its
// own.
func TestMessageOf(t *testing.T) {
	wf := retried()
	set := func(id, msg string) {
		n := wf.Status.Nodes[id]
		n.Message = msg
		wf.Status.Nodes[id] = n
	}
	set("db", "retryStrategy.expression evaluated to false")
	set("db0", "main: Error (exit code 75): Argo CD API unreachable")
	set("db1", "main: Error (exit code 1): Degraded: Deployment app/db: 0/1 ready")
	set("web", "main: Error (exit code 1): OutOfSync")
	n := func(id string) *wfv1.NodeStatus { c := wf.Status.Nodes[id]; return &c }
	if got := MessageOf(wf, n("db")); got != "main: Error (exit code 1): Degraded: Deployment app/db: 0/1 ready" {
		t.Errorf("Retry node: %q, want the latest attempt's", got)
	}
	if got := MessageOf(wf, n("web")); got != "main: Error (exit code 1): OutOfSync" {
		t.Errorf("Pod node: %q", got)
	}
	set("db0", "")
	set("db1", "")
	if got := MessageOf(wf, n("db")); got != "retryStrategy.expression evaluated to false" {
		t.Errorf("attempts without a message: %q, want the Retry node's", got)
	}
}

// ValidationOf reads a validate task's own result (apps and aggregate),
// else its latest attempt's; a sync-and-wait result or the template's
// default "{}" (the step never ran) is none.
func TestValidationOf(t *testing.T) {
	wf := retried()
	nodes := TaskNodes(wf)
	if v := ValidationOf(wf, nodes["db"]); v != nil {
		t.Errorf("a sync-and-wait task: %+v, want none", v)
	}
	v := wfv1.AnyString(`{}`)
	wf.Status.Nodes["web"] = wfv1.NodeStatus{ID: "web", Name: "p-deploy-x.web", DisplayName: "web", Type: wfv1.NodeTypePod,
		Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: "result", Value: &v}}}}
	if got := ValidationOf(wf, ptr(wf.Status.Nodes["web"])); got != nil {
		t.Errorf("the default {}: %+v, want none", got)
	}
	wf.Status.Nodes["db0"] = wfv1.NodeStatus{ID: "db0", Name: "p-deploy-x.db(0)", DisplayName: "db(0)", Type: wfv1.NodeTypePod, StartedAt: at(0),
		Outputs: result(`{"command":"validate","outcome":"Partial","exitCode":2,"aggregate":"Degraded","apps":[{"app":"db","verdict":"Degraded","health":"Degraded","syncStatus":"Synced"},{"app":"web","verdict":"Healthy","health":"Healthy","syncStatus":"Synced"}]}`)}
	wf.Status.Nodes["db1"] = wfv1.NodeStatus{ID: "db1", Name: "p-deploy-x.db(1)", DisplayName: "db(1)", Type: wfv1.NodeTypePod, StartedAt: at(60),
		Outputs: result(`{}`)}
	got := ValidationOf(wf, TaskNodes(wf)["db"])
	if got == nil || got.Aggregate != "Degraded" || len(got.Apps) != 2 || got.Apps[0].App != "db" || got.Apps[0].SyncStatus != "Synced" || got.ExitCode != 2 {
		t.Errorf("db: %+v, want the attempt's validate result", got)
	}
}

func ptr(n wfv1.NodeStatus) *wfv1.NodeStatus { return &n }
