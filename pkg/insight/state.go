package insight

import (
	"sort"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

// settle fills every node's state from the Workflow's nodes and Argo CD's
// Applications (keyed NAMESPACE/NAME).
func (r *Run) settle(wf *wfv1.Workflow, apps map[string]*unstructured.Unstructured, now time.Time) {
	nodes := livestate.TaskNodes(wf)
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
			n.Message = livestate.MessageOf(wf, an)
			if res := livestate.ResultOf(wf, an); res != nil {
				if res.Message != "" {
					n.Message = res.Message
				}
				n.Diagnostics = res.Diagnostics()
			}
		}
	}
	done := wf.Status.Phase.Completed()
	for _, n := range r.Nodes {
		n.State = r.state(n, nodes[n.Name], done)
	}
	if r.Action == actionValidate {
		r.validation(wf, nodes, done)
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
	case n.Stack && len(n.Apps) == 0: // a join runs only while it waits
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
	case a.Health != appstatus.Healthy:
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
	return r.inOrder(r.deps.DepsClosure(r.deps.Deps(n.Name)...))
}

// downstream is everything that depends on n, directly or not.
func (r *Run) downstream(n *Node) []*Node {
	return r.inOrder(r.deps.DependentsClosure(r.deps.Dependents(n.Name)...))
}

// inOrder are the named nodes in run order.
func (r *Run) inOrder(names []string) []*Node {
	out := make([]*Node, 0, len(names))
	for _, x := range names {
		out = append(out, r.byName[x])
	}
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

// appStatus is what Argo CD's controller wrote on the Application; an
// operation requested but not started yet counts as Running.
func appStatus(u *unstructured.Unstructured) *AppStatus {
	s := livestate.ReadApp(u)
	if s.OperationRequested && s.OperationPhase != "Running" {
		s.OperationPhase, s.OperationMessage = "Running", "sync requested"
	}
	return &s
}

func or[S ~string](s S, def string) string {
	if s == "" {
		return def
	}
	return string(s)
}
