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
	"github.com/deployctl/deployctl/pkg/livestate"
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
// their state, so their apps are not synced again. The linked v3.7.18 has
// the fix of argoproj/argo-workflows#14796 (3.6 set succeeded Retry nodes
// behind a finished join back to Running, and the run hung), so this holds
// whatever the cluster's controller version: the plan is made here.
func planRetry(ctx context.Context, w *wfv1.Workflow) (*retryPlan, error) {
	if w.Status.IsOffloadNodeStatus() {
		return nil, fmt.Errorf("%s keeps its node status in the workflow archive database (offloaded): resume it with `argo retry %s -n %s`", w.Name, w.Name, w.Namespace)
	}
	nw, pods, err := util.FormulateRetryWorkflow(ctx, w.DeepCopy(), false, "", nil)
	if err != nil {
		return nil, fmt.Errorf("preparing the retry of %s: %w", w.Name, err)
	}
	before, after := livestate.TaskNodes(w), livestate.TaskNodes(nw)
	var reset []string
	for name := range before {
		if runsAgain(nw, after[name]) {
			reset = append(reset, name)
		}
	}
	sort.Strings(reset)
	return &retryPlan{wf: nw, reset: reset, podsToDel: pods}, nil
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
	for _, a := range livestate.Attempts(w, n) {
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
