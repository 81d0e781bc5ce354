package insight

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// settle fills every node's state from the Workflow's nodes and Argo CD's
// Applications (keyed NAMESPACE/NAME).
func (r *Run) settle(wf *wfv1.Workflow, apps map[string]*unstructured.Unstructured, now time.Time) {
	nodes := taskNodes(wf)
	for _, n := range r.Nodes {
		if n.App != "" {
			ns := n.AppNamespace
			if ns == "" {
				ns = r.ArgoCDNamespace
			}
			n.ArgoCD = appStatus(apps[ns+"/"+n.App])
		}
		an := nodes[n.Name]
		if an == nil {
			continue
		}
		n.Phase = string(an.Phase)
		n.StartedAt, n.FinishedAt = an.StartedAt.Time, an.FinishedAt.Time
		if an.Phase != wfv1.NodeOmitted && an.Phase != wfv1.NodeSkipped {
			n.Seconds = seconds(n.StartedAt, n.FinishedAt, now)
		}
		if an.Type == wfv1.NodeTypeRetry {
			n.Attempts = len(an.Children)
		}
		if an.FailedOrError() {
			n.Message = an.Message
			if res := resultOf(wf, an); res != nil {
				if res.Message != "" {
					n.Message = res.Message
				}
				n.Diagnostics = res.diagnostics()
			}
		}
	}
	done := wf.Status.Phase.Completed()
	for _, n := range r.Nodes {
		n.State = r.state(n, nodes[n.Name], done)
	}
	for _, n := range r.Nodes {
		switch n.State {
		case Waiting:
			for _, b := range r.blockers(n) {
				n.WaitingFor = append(n.WaitingFor, b.Name)
			}
		case Omitted, NotRun:
			for _, up := range r.upstream(n) {
				if up.State == Failed {
					n.BlockedBy = append(n.BlockedBy, up.Name)
				}
			}
		}
	}
}

func (r *Run) state(n *Node, an *wfv1.NodeStatus, done bool) string {
	if an == nil {
		if !done {
			return Waiting
		}
		for _, up := range r.upstream(n) {
			if nd := r.byName[up.Name]; nd.Phase == string(wfv1.NodeFailed) || nd.Phase == string(wfv1.NodeError) {
				return Omitted
			}
		}
		return NotRun
	}
	switch an.Phase {
	case wfv1.NodeOmitted, wfv1.NodeSkipped:
		return Omitted
	case wfv1.NodeFailed, wfv1.NodeError:
		return Failed
	case wfv1.NodeSucceeded:
		switch {
		case n.Stack || (r.Action != actionDeploy && r.Action != actionTeardown):
			return Done
		case r.Action == actionTeardown:
			return Deleted
		}
		return Healthy
	case wfv1.NodePending:
		return Starting
	}
	// Running.
	switch {
	case n.Stack:
		return Waiting
	case r.Action == actionTeardown:
		return Deleting
	case r.Action != actionDeploy:
		return Checking
	}
	a := n.ArgoCD
	switch {
	case a == nil || !a.Exists:
		return Creating
	case a.OperationPhase == "Running" || a.OperationPhase == "Terminating":
		return Syncing
	case a.Health != "Healthy":
		return WaitingHealth
	}
	return Checking
}

// blockers are what holds back a waiting node: its dependencies that are
// not done, a stack's join replaced by the stack's apps that are not.
func (r *Run) blockers(n *Node) []*Node {
	seen := map[string]bool{}
	var out []*Node
	var walk func(names []string)
	walk = func(names []string) {
		for _, d := range names {
			dep := r.byName[d]
			if dep == nil || seen[d] || finished(dep.State) {
				continue
			}
			seen[d] = true
			if dep.Stack {
				walk(dep.DependsOn)
				continue
			}
			out = append(out, dep)
		}
	}
	walk(n.DependsOn)
	r.sortByOrder(out)
	return out
}

// upstream is everything n depends on, directly or not, in run order.
func (r *Run) upstream(n *Node) []*Node {
	return r.closure(n.DependsOn, func(x *Node) []string { return x.DependsOn })
}

// downstream is everything that depends on n, directly or not.
func (r *Run) downstream(n *Node) []*Node {
	return r.closure(n.dependents, func(x *Node) []string { return x.dependents })
}

func (r *Run) closure(start []string, next func(*Node) []string) []*Node {
	seen := map[string]bool{}
	var out []*Node
	var walk func(names []string)
	walk = func(names []string) {
		for _, d := range names {
			x := r.byName[d]
			if x == nil || seen[d] {
				continue
			}
			seen[d] = true
			out = append(out, x)
			walk(next(x))
		}
	}
	walk(start)
	r.sortByOrder(out)
	return out
}

func (r *Run) sortByOrder(nodes []*Node) {
	pos := map[string]int{}
	for i, n := range r.Nodes {
		pos[n.Name] = i
	}
	sort.SliceStable(nodes, func(i, j int) bool { return pos[nodes[i].Name] < pos[nodes[j].Name] })
}

// finished: the node will not change any more, and did what it should.
func finished(state string) bool { return state == Healthy || state == Deleted || state == Done }

// taskNodes maps each task of the top-level DAG to its node (the Retry node
// of a task with a retryStrategy), as the executor reads them.
func taskNodes(wf *wfv1.Workflow) map[string]*wfv1.NodeStatus {
	out := map[string]*wfv1.NodeStatus{}
	for id := range wf.Status.Nodes {
		n := wf.Status.Nodes[id]
		if n.DisplayName == "" || n.Name != wf.Name+"."+n.DisplayName {
			continue
		}
		out[n.DisplayName] = &n
	}
	return out
}

// stepResult is the part of the in-step binary's result (the node's output
// parameter `result`) that explains a failure.
type stepResult struct {
	Command        string  `json:"command"`
	Message        string  `json:"message"`
	Health         string  `json:"health,omitempty"`
	HealthMessage  string  `json:"healthMessage,omitempty"`
	SyncStatus     string  `json:"syncStatus,omitempty"`
	OperationPhase string  `json:"operationPhase,omitempty"`
	Failing        []issue `json:"failingResources,omitempty"`
	Degraded       []issue `json:"degradedResources,omitempty"`
	Orphans        []issue `json:"orphans,omitempty"`
	Checks         []struct {
		Check  string `json:"check"`
		Passed bool   `json:"passed"`
		Detail string `json:"detail,omitempty"`
	} `json:"checks,omitempty"`
}

type issue struct {
	Resource string `json:"resource"`
	Status   string `json:"status,omitempty"`
	Message  string `json:"message,omitempty"`
}

func (i issue) String() string {
	return strings.TrimSuffix(strings.TrimSpace(i.Resource+" "+i.Status)+": "+i.Message, ": ")
}

func (s *stepResult) diagnostics() []string {
	var out []string
	if s.Health != "" {
		out = append(out, fmt.Sprintf("Argo CD at the end of the step: %s/%s %s (operation %s)",
			or(s.SyncStatus, "-"), s.Health, s.HealthMessage, or(s.OperationPhase, "-")))
	}
	for _, x := range s.Failing {
		out = append(out, "sync failed: "+x.String())
	}
	for _, x := range s.Degraded {
		out = append(out, "unhealthy: "+x.String())
	}
	for _, c := range s.Checks {
		if !c.Passed {
			out = append(out, "check "+c.Check+" failed: "+c.Detail)
		}
	}
	for _, x := range s.Orphans {
		out = append(out, "left behind: "+x.String())
	}
	return out
}

// resultOf is the task's step result: its own output, else that of its
// latest attempt that wrote one.
func resultOf(wf *wfv1.Workflow, n *wfv1.NodeStatus) *stepResult {
	cands := []wfv1.NodeStatus{*n}
	var attempts []wfv1.NodeStatus
	for _, id := range n.Children {
		if c, ok := wf.Status.Nodes[id]; ok && n.Type == wfv1.NodeTypeRetry {
			attempts = append(attempts, c)
		}
	}
	sort.SliceStable(attempts, func(i, j int) bool { return attempts[j].StartedAt.Before(&attempts[i].StartedAt) })
	for _, c := range append(cands, attempts...) {
		if c.Outputs == nil {
			continue
		}
		for _, p := range c.Outputs.Parameters {
			var res stepResult
			if p.Name == "result" && p.Value != nil && json.Unmarshal([]byte(p.Value.String()), &res) == nil && res.Command != "" {
				return &res
			}
		}
	}
	return nil
}

// appStatus reads what Argo CD's controller wrote on the Application.
func appStatus(u *unstructured.Unstructured) *AppStatus {
	if u == nil {
		return &AppStatus{}
	}
	str := func(path ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, path...)
		return v
	}
	s := &AppStatus{Exists: true,
		Sync: str("status", "sync", "status"), Health: str("status", "health", "status"), HealthMessage: str("status", "health", "message"),
		OperationPhase: str("status", "operationState", "phase"), OperationMessage: str("status", "operationState", "message")}
	if _, requested := u.Object["operation"]; requested && s.OperationPhase != "Running" {
		s.OperationPhase, s.OperationMessage = "Running", "sync requested"
	}
	res, _, _ := unstructured.NestedSlice(u.Object, "status", "resources")
	for _, x := range res {
		m, _ := x.(map[string]any)
		h, _, _ := unstructured.NestedString(m, "health", "status")
		if h == "" || h == "Healthy" {
			continue
		}
		msg, _, _ := unstructured.NestedString(m, "health", "message")
		s.Problems = append(s.Problems, strings.TrimSuffix(fmt.Sprintf("%v %v/%v %s: %s", m["kind"], m["namespace"], m["name"], h, msg), ": "))
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, x := range conds {
		m, _ := x.(map[string]any)
		if t, _ := m["type"].(string); strings.HasSuffix(t, "Error") {
			s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", t, m["message"]))
		}
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
