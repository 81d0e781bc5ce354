package executor

import (
	"context"
	"fmt"
	"sort"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/util"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
)

// Annotations the executor puts on the workflows it submits.
const (
	AnnotationEnvironment = "deployctl.dev/environment"
	AnnotationTraceID     = "deployctl.dev/trace-id"
)

// platformRuns lists every Workflow of the platform (all actions, all specs).
func (r *run) platformRuns(ctx context.Context) ([]wfv1.Workflow, error) {
	list, err := r.cl.Workflows.ArgoprojV1alpha1().Workflows(r.wfNamespace()).List(ctx, metav1.ListOptions{
		LabelSelector: compile.LabelPlatform + "=" + r.cfg.Platform(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing the platform's workflows: %w", err)
	}
	return list.Items, nil
}

func (r *run) wfNamespace() string { return r.cfg.DAG.Platform.Spec.Workflow.Namespace }

// newRun is the compiled Workflow of an action, with the run's arguments
// and the environment and trace id recorded on it.
func (r *run) newRun(action dag.Action, params map[string]string) *wfv1.Workflow {
	w := r.compiled.Workflows[action].DeepCopy()
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[AnnotationEnvironment] = r.cfg.Environment
	if r.cfg.TraceID != "" {
		w.Annotations[AnnotationTraceID] = r.cfg.TraceID
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.Spec.Arguments.Parameters = append(w.Spec.Arguments.Parameters, wfv1.Parameter{Name: k, Value: wfv1.AnyStringPtr(params[k])})
	}
	return w
}

// submit creates a new run.
func (r *run) submit(ctx context.Context, w *wfv1.Workflow) (*wfv1.Workflow, error) {
	created, err := r.cl.Workflows.ArgoprojV1alpha1().Workflows(w.Namespace).Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("submitting the %s workflow: %w", w.Labels[compile.LabelAction], err)
	}
	return created, nil
}

// retryPlan is what resuming a failed run does, computed by Argo's own
// retry (`argo retry`): the run as it will be, the nodes reset to run
// again, and the pods of those nodes to delete first.
type retryPlan struct {
	wf        *wfv1.Workflow
	reset     []string // task names that run again
	podsToDel []string
}

// planRetry runs util.FormulateRetryWorkflow on a copy of w: without
// restartSuccessful or a node selector, exactly the failed nodes and what
// never ran (the failed nodes' dependents) are reset; succeeded nodes keep
// their state, so their apps are not synced again.
func planRetry(ctx context.Context, w *wfv1.Workflow) (*retryPlan, error) {
	if w.Status.IsOffloadNodeStatus() {
		return nil, fmt.Errorf("%s keeps its node status in the workflow archive database (offloaded): resume it with `argo retry %s -n %s`", w.Name, w.Name, w.Namespace)
	}
	nw, pods, err := util.FormulateRetryWorkflow(ctx, w.DeepCopy(), false, "", nil)
	if err != nil {
		return nil, fmt.Errorf("preparing the retry of %s: %w", w.Name, err)
	}
	keepSucceeded(w, nw)
	before, after := taskNodes(w), taskNodes(nw)
	var reset []string
	for name := range before {
		if runsAgain(nw, after[name]) {
			reset = append(reset, name)
		}
	}
	sort.Strings(reset)
	return &retryPlan{wf: nw, reset: reset, podsToDel: pods}, nil
}

// keepSucceeded restores the Retry nodes that Argo's retry sets back to
// Running although their last attempt succeeded. FormulateRetryWorkflow
// resets every Retry node on one path from a failed node up to the root
// (through joins: a join's parent is one of its dependencies, picked by map
// order); the controller marks such a node Succeeded again only when its
// DAG walk visits it, and it never visits a task whose dependents are all
// done already (e.g. a dependency of a Succeeded join): the run then stays
// Running forever, every node green. Seen on the e2e cluster with Argo
// Workflows v3.6.18 (`widget-crd`, reached only through the join
// `foundation`). Restoring them changes nothing else: they do not run
// again either way, and their dependents are re-run only if they were reset.
func keepSucceeded(old, nw *wfv1.Workflow) {
	for id, n := range nw.Status.Nodes {
		o, ok := old.Status.Nodes[id]
		if n.Type != wfv1.NodeTypeRetry || n.Phase == wfv1.NodeSucceeded || !ok || o.Phase != wfv1.NodeSucceeded || runsAgain(nw, &n) {
			continue
		}
		n.Phase, n.Message, n.StartedAt, n.FinishedAt = o.Phase, o.Message, o.StartedAt, o.FinishedAt
		n.Outputs = o.Outputs.DeepCopy()
		nw.Status.Nodes[id] = n
	}
}

// runsAgain says whether a task node of a retried run will run a pod
// again: its node was removed, or it is not Succeeded and keeps no
// succeeded attempt (a Retry node whose last attempt succeeded is marked
// Succeeded by the controller without a new pod: processNodeRetries).
func runsAgain(w *wfv1.Workflow, n *wfv1.NodeStatus) bool {
	if n == nil {
		return true
	}
	if n.Phase == wfv1.NodeSucceeded {
		return false
	}
	for _, a := range attempts(w, n) {
		if a != n && a.Phase == wfv1.NodeSucceeded {
			return false
		}
	}
	return true
}

// resume applies a retry plan as the Argo server's RetryWorkflow does:
// delete the reset nodes' pods, then update the Workflow; the controller
// runs the reset nodes. An update that lost a race (the controller wrote
// the run meanwhile) is planned again from the fresh object.
func (r *run) resume(ctx context.Context, w *wfv1.Workflow) (*wfv1.Workflow, *retryPlan, error) {
	wfs := r.cl.Workflows.ArgoprojV1alpha1().Workflows(w.Namespace)
	name := w.Name
	for try := 0; ; try++ {
		plan, err := planRetry(ctx, w)
		if err != nil {
			return nil, nil, err
		}
		for _, pod := range plan.podsToDel {
			err := r.cl.Kube.CoreV1().Pods(w.Namespace).Delete(ctx, pod, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, nil, fmt.Errorf("deleting pod %s of a node to retry: %w", pod, err)
			}
		}
		updated, err := wfs.Update(ctx, plan.wf, metav1.UpdateOptions{})
		if err == nil {
			return updated, plan, nil
		}
		if !apierrors.IsConflict(err) || try >= 3 {
			return nil, nil, fmt.Errorf("resuming %s: %w", name, err)
		}
		if w, err = wfs.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return nil, nil, fmt.Errorf("resuming %s: %w", name, err)
		}
	}
}
