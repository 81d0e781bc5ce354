package executor

import (
	"context"
	"fmt"
	"sort"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
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
