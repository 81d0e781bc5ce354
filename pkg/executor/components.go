package executor

import (
	"fmt"
	"sort"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/executor/internal/workflow"
	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/report"
)

// compRef is one component: a workflow task, its Argo CD Application and
// its stack.
type compRef struct{ task, app, stack string }

// componentRefs lists the action's components in execution order (deploy:
// dependencies first; teardown: dependents first), the GitOps handoff last
// on deploy and first on teardown.
func (r *run) componentRefs(action dag.Action) []compRef {
	d := r.compiled.Deploy
	if action == dag.Teardown {
		d = r.compiled.Teardown
	}
	g := d.Graph
	if action == dag.Teardown {
		g = g.Reverse()
	}
	order, _ := g.TopoOrder()
	var refs []compRef
	for _, n := range order {
		if node := d.Node(n); node != nil && node.Kind == dag.App {
			refs = append(refs, compRef{task: n, app: n, stack: node.Stack})
		}
	}
	if root := r.compiled.Root; root != nil {
		h := compRef{task: compile.HandoffTask, app: root.Name, stack: "gitops"}
		if action == dag.Teardown {
			refs = append([]compRef{h}, refs...)
		} else {
			refs = append(refs, h)
		}
	}
	return refs
}

func tasksOf(refs []compRef) []string {
	out := make([]string, len(refs))
	for i, c := range refs {
		out[i] = c.task
	}
	return out
}

func appsOf(refs []compRef) []string {
	out := make([]string, len(refs))
	for i, c := range refs {
		out[i] = c.app
	}
	return out
}

// fromWorkflow fills the components and failures from a run's nodes and
// step results. kept are the tasks a resume did not run again.
func (r *run) fromWorkflow(w *wfv1.Workflow, refs []compRef, action dag.Action, kept map[string]bool) {
	nodes := livestate.TaskNodes(w)
	failed := map[string]bool{}
	for _, c := range refs {
		if n, ok := nodes[c.task]; ok && n.FailedOrError() {
			failed[c.task] = true
		}
	}
	d := r.compiled.Deploy
	if action == dag.Teardown {
		d = r.compiled.Teardown
	}
	offloaded := w.Status.IsOffloadNodeStatus() && len(w.Status.Nodes) == 0
	for _, c := range refs {
		comp := report.Component{Name: c.app, Stack: c.stack}
		n, ok := nodes[c.task]
		switch {
		case offloaded:
			comp.Status = report.CompOffloaded
			comp.Message = fmt.Sprintf("the run's node status is offloaded to Argo's database, which deployctl does not read: `argo get %s -n %s`", w.Name, w.Namespace)
		case !ok || n.Phase == wfv1.NodeOmitted || n.Phase == wfv1.NodeSkipped:
			comp.Status = report.CompNotRun
			if blockers := blockedBy(d, c.task, failed, action); len(blockers) > 0 {
				comp.Message = "not run: " + strings.Join(blockers, ", ") + " failed"
			} else if w.Status.Phase.Completed() {
				comp.Message = "not run"
			} else {
				comp.Status, comp.Message = "Waiting", "not started yet"
			}
		default:
			comp.Status = string(n.Phase)
			comp.DurationSeconds = workflow.NodeSeconds(n)
			if n.Type == wfv1.NodeTypeRetry {
				comp.Attempts = len(livestate.Attempts(w, n))
			}
			comp.StepResult = livestate.ResultOf(w, n)
			if kept[c.task] && n.Phase == wfv1.NodeSucceeded {
				comp.Status, comp.Message = report.CompKept, "succeeded in the resumed run; not synced again"
			}
			if action == dag.Teardown && n.Phase == wfv1.NodeSucceeded && comp.StepResult != nil {
				comp.Status = report.CompDeleted
				if comp.StepResult.NothingToDo {
					comp.Status, comp.Message = report.CompNothingToDo, "the Application did not exist"
				}
				var retained []string
				if res := comp.StepResult; len(res.RetainedPVCs) > 0 {
					retained = append(retained, "retained PersistentVolumeClaims: "+strings.Join(res.RetainedPVCs, ", "))
				}
				if res := comp.StepResult; len(res.RetainedCRDs) > 0 {
					retained = append(retained, "retained CustomResourceDefinitions: "+strings.Join(res.RetainedCRDs, ", "))
				}
				if len(retained) > 0 {
					comp.Message = strings.Join(retained, "; ")
				}
			}
			if n.FailedOrError() {
				msg := livestate.MessageOf(w, n)
				comp.Message = msg
				if res := comp.StepResult; res != nil && res.Message != "" {
					comp.Message = res.Message
				}
				if res := comp.StepResult; action == dag.Teardown && res != nil && len(res.Orphans) > 0 {
					comp.Status = report.CompOrphans
				}
				diag := stepDiagnostics(comp.StepResult)
				if msg != "" {
					diag = append([]string{"node: " + msg}, diag...)
				}
				r.report.Fail(c.app, PhaseFollow, comp.Message, diag...)
				r.metrics.Error(PhaseFollow)
			}
		}
		r.report.Components = append(r.report.Components, comp)
	}
}

// blockedBy lists the failed tasks that a task (transitively) waits for.
func blockedBy(d *dag.DAG, task string, failed map[string]bool, action dag.Action) []string {
	if !d.Graph.Has(task) {
		// the handoff waits for everything
		var out []string
		for f := range failed {
			out = append(out, f)
		}
		sort.Strings(out)
		return out
	}
	var deps []string
	if action == dag.Teardown {
		deps = d.Graph.DependentsClosure(task)
	} else {
		deps = d.Graph.DepsClosure(task)
	}
	var out []string
	for _, x := range deps {
		if x != task && failed[x] {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// withHealth adds what Argo CD says of each component, and records it in
// the metrics.
func (r *run) withHealth(states map[string]*appState) {
	for i := range r.report.Components {
		c := &r.report.Components[i]
		s := states[c.Name]
		if s == nil {
			continue
		}
		c.Health, c.Sync, c.Verdict = string(s.Health), string(s.Sync), s.Verdict
		h := c.Health
		if !s.Exists {
			c.Health, h = "Absent", "Absent"
		}
		r.metrics.SetHealth(c.Name, c.Stack, h)
	}
}

// componentsFromApps is the component list of a read-only health check.
func (r *run) componentsFromApps(refs []compRef, states map[string]*appState) {
	for _, c := range refs {
		s := states[c.app]
		comp := report.Component{Name: c.app, Stack: c.stack, Status: report.CompChecked}
		if s != nil {
			comp.Verdict = s.Verdict
			switch {
			case !s.Exists:
				comp.Message = "the Application does not exist"
			case s.Verdict != AggHealthy:
				comp.Message = healthDetail(s)
			}
		}
		r.report.Components = append(r.report.Components, comp)
	}
	r.withHealth(states)
}

// healthCode maps an aggregate to the exit code of validate (and of a
// deploy whose workflow succeeded): Healthy 0; Progressing or Degraded 2;
// Failed 1.
func healthCode(agg string) int {
	switch agg {
	case AggHealthy:
		return 0
	case AggProgressing, AggDegraded:
		return 2
	}
	return 1
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// healthDetail says what is known of an app that is not Healthy. Argo CD 3
// no longer keeps resource health in the Application's status (it stays in
// its cache), so the detail may be the API's alone.
func healthDetail(s *appState) string {
	var parts []string
	if s.HealthMessage != "" {
		parts = append(parts, s.HealthMessage)
	}
	parts = append(parts, s.Problems...)
	if len(parts) == 0 {
		return fmt.Sprintf("%s, sync %s; the Application status holds no detail: `argocd app get %s` shows the resource tree", orDash(s.Health), orDash(s.Sync), s.Name)
	}
	return strings.Join(parts, "; ")
}
