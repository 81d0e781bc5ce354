package workflow

import (
	"context"
	"fmt"
	"sort"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/packer"
	"github.com/argoproj/argo-workflows/v3/workflow/util"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate"
)

// Submit creates a new run.
func Submit(ctx context.Context, cl *kube.Clients, w *wfv1.Workflow) (*wfv1.Workflow, error) {
	created, err := cl.Workflows.ArgoprojV1alpha1().Workflows(w.Namespace).Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("submitting the %s workflow: %w", w.Labels[compile.LabelAction], err)
	}
	return created, nil
}

// RetryPlan is what resuming a failed run does, computed by Argo's own
// retry (`argo retry`): the run as it will be, the nodes reset to run
// again, and the pods of those nodes to delete first.
type RetryPlan struct {
	Workflow     *wfv1.Workflow
	Reset        []string // task names that run again
	PodsToDelete []string
}

// PlanRetry runs util.FormulateRetryWorkflow on a copy of w: without
// restartSuccessful or a node selector, exactly the failed nodes and what
// never ran (the failed nodes' dependents) are reset; succeeded nodes keep
// their state, so their apps are not synced again. The linked v3.7.18 has
// the fix of argoproj/argo-workflows#14796 (3.6 set succeeded Retry nodes
// behind a finished join back to Running, and the run hung), so this holds
// whatever the cluster's controller version: the plan is made here.
func PlanRetry(ctx context.Context, w *wfv1.Workflow) (*RetryPlan, error) {
	if w.Status.IsOffloadNodeStatus() {
		return nil, fmt.Errorf("%s keeps its node status in the workflow archive database (offloaded): resume it with `argo retry %s -n %s`", w.Name, w.Name, w.Namespace)
	}
	w = w.DeepCopy()
	if err := livestate.Hydrate(w); err != nil {
		return nil, err
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
	return &RetryPlan{Workflow: nw, Reset: reset, PodsToDelete: pods}, nil
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

// Resume applies a retry plan as the Argo server's RetryWorkflow does:
// delete the reset nodes' pods, then update the Workflow; the controller
// runs the reset nodes. An update that lost a race (the controller wrote
// the run meanwhile) is planned again from the fresh object.
func Resume(ctx context.Context, cl *kube.Clients, w *wfv1.Workflow) (*wfv1.Workflow, *RetryPlan, error) {
	wfs := cl.Workflows.ArgoprojV1alpha1().Workflows(w.Namespace)
	name := w.Name
	for try := 0; ; try++ {
		plan, err := PlanRetry(ctx, w)
		if err != nil {
			return nil, nil, err
		}
		for _, pod := range plan.PodsToDelete {
			err := cl.Kube.CoreV1().Pods(w.Namespace).Delete(ctx, pod, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, nil, fmt.Errorf("deleting pod %s of a node to retry: %w", pod, err)
			}
		}
		// As Argo's server does before it writes a retried run back: its
		// nodes compressed again if the object would pass 1 MiB.
		write := plan.Workflow.DeepCopy()
		if err := packer.CompressWorkflowIfNeeded(write); err != nil {
			return nil, nil, fmt.Errorf("resuming %s: %w: resume it with `argo retry %s -n %s` (Argo's server offloads the nodes when its database is configured)", name, err, name, w.Namespace)
		}
		updated, err := wfs.Update(ctx, write, metav1.UpdateOptions{})
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
