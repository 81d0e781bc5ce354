package executor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/common"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

// Annotations the executor puts on the workflows it submits.
const (
	AnnotationEnvironment = "deployctl.dev/environment"
	AnnotationTraceID     = "deployctl.dev/trace-id"
)

// How deploy and teardown submit a new run (WORKFLOW_SUBMIT / --submit).
//
// By reference (the default) the Workflow names its WorkflowTemplate, and
// Argo v3.7/v4 stores the template's spec in the Workflow's status twice
// (status.storedWorkflowTemplateSpec and status.storedTemplates:
// setExecWorkflow in workflow/controller/operator.go), which caps a deploy
// Workflow under Argo's 1 MiB at about 835 apps (README "Where it stops
// scaling"). Inline, the Workflow carries the template's spec itself and
// Argo keeps it once, in spec: about 1,150 apps, and 2,000 with Argo's
// node-status offload in pod mode. Not the default: a controller whose
// workflowRestrictions.templateReferencing is Strict or Secure runs only
// Workflows that reference a template.
const (
	SubmitReference = "reference"
	SubmitInline    = "inline"
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

// newRun is the Workflow a new run of an action submits: the compiled one
// (a workflowTemplateRef), with the run's arguments and the environment and
// trace id recorded on it; with WORKFLOW_SUBMIT=inline, the same with the
// WorkflowTemplate's spec inline (inlineRun).
func (r *run) newRun(ctx context.Context, action dag.Action, params map[string]string) (*wfv1.Workflow, error) {
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
	if r.cfg.Submit != SubmitInline {
		return w, nil
	}
	return r.inlineRun(ctx, w)
}

// inlineRun is w with its WorkflowTemplate's spec inline, the template as
// the cluster serves it: the one the executor applied a moment before (as
// the API server stored it, defaults included), which is exactly what the
// reference would have run. The compiled spec is not used: the Workflow
// must be what Argo would run for the reference, whoever wrote the
// template (an apply by hand, Argo CD from Git). A template whose spec hash
// is not this run's was changed after the apply (another deploy of another
// spec or scope, its name is the same): refused, like two runs would be.
func (r *run) inlineRun(ctx context.Context, w *wfv1.Workflow) (*wfv1.Workflow, error) {
	name := w.Spec.WorkflowTemplateRef.Name
	wt, err := r.cl.Workflows.ArgoprojV1alpha1().WorkflowTemplates(w.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading WorkflowTemplate %s/%s to submit it inline (%s=%s): %w", w.Namespace, name, "WORKFLOW_SUBMIT", SubmitInline, err)
	}
	if got := wt.Labels[compile.LabelSpecHash]; got != r.compiled.SpecHash {
		return nil, fmt.Errorf("WorkflowTemplate %s/%s is of spec hash %q, not this run's %q: it changed after this action applied it (another deploy of another spec or scope?); run again once that one is done",
			w.Namespace, name, got, r.compiled.SpecHash)
	}
	return Inline(w, wt)
}

// Inline is run, a Workflow that references wt (workflowTemplateRef) and
// sets nothing else in its spec but workflow parameters, with wt's spec
// inline instead: what Argo's controller would execute for the reference
// (workflow/util.JoinWorkflowSpec, without the controller's
// workflowDefaults, which it merges into an inline Workflow as well): wt's
// spec, each of run's parameters replacing wt's of the same name or added.
// run's metadata is kept, with the label Argo's own `submit --from` puts
// (workflows.argoproj.io/workflow-template: the template's name) so that
// Argo's UI and duration estimates still tie the run to its template.
func Inline(run *wfv1.Workflow, wt *wfv1.WorkflowTemplate) (*wfv1.Workflow, error) {
	ref := run.Spec.WorkflowTemplateRef
	switch {
	case ref == nil:
		return nil, fmt.Errorf("workflow %s%s references no WorkflowTemplate", run.Name, run.GenerateName)
	case ref.ClusterScope || ref.Name != wt.Name:
		return nil, fmt.Errorf("workflow %s%s references %s, not WorkflowTemplate %s", run.Name, run.GenerateName, ref.Name, wt.Name)
	}
	rest := run.Spec.DeepCopy()
	rest.WorkflowTemplateRef, rest.Arguments.Parameters = nil, nil
	if !apiequality.Semantic.DeepEqual(*rest, wfv1.WorkflowSpec{}) {
		return nil, errors.New("workflow " + run.Name + run.GenerateName + " sets more than its template's parameters: it cannot be inlined without Argo's merge")
	}
	out := run.DeepCopy()
	out.Spec = *wt.Spec.DeepCopy()
	out.Spec.WorkflowTemplateRef = nil
	params := out.Spec.Arguments.Parameters
	for _, p := range run.Spec.Arguments.Parameters {
		i := 0
		for i < len(params) && params[i].Name != p.Name {
			i++
		}
		if i == len(params) {
			params = append(params, wfv1.Parameter{})
		}
		params[i] = *p.DeepCopy()
	}
	out.Spec.Arguments.Parameters = params
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	out.Labels[common.LabelKeyWorkflowTemplate] = wt.Name
	return out, nil
}

// refusedInline says whether w is an inline run the controller refused
// before running anything: a workflowRestrictions.templateReferencing of
// Strict or Secure lets only Workflows that reference a template run
// (setExecWorkflow, workflow/controller/operator.go).
func refusedInline(w *wfv1.Workflow) bool {
	return w != nil && w.Spec.WorkflowTemplateRef == nil && w.Status.Phase == wfv1.WorkflowError &&
		len(w.Status.Nodes) == 0 && strings.Contains(w.Status.Message, "must use workflowTemplateRef")
}

// inlineRefused ends an action whose inline run the controller refused:
// the run is deleted (it ran nothing; left, it would be resumed by the next
// deploy, and refused again), and the action exits 3 with the fix.
func (r *run) inlineRefused(ctx context.Context, w *wfv1.Workflow) (int, string, error) {
	r.metrics.Error(PhaseFollow)
	msg := fmt.Sprintf("the workflow-controller refused the inline run %s: %s", w.Name, w.Status.Message)
	r.report.Fail(componentExecutor, PhaseFollow, msg)
	if err := r.cl.Workflows.ArgoprojV1alpha1().Workflows(w.Namespace).Delete(ctx, w.Name, metav1.DeleteOptions{}); err != nil {
		msg += fmt.Sprintf("; deleting it failed (%v): delete it by hand before the next run", err)
	} else {
		msg += "; it ran nothing and was deleted"
	}
	r.report.Recommend("this controller's workflowRestrictions.templateReferencing (Strict or Secure) runs only Workflows that reference a template: set WORKFLOW_SUBMIT=reference (or --submit=reference), the default, and run %s again", r.cfg.Action)
	return exitcode.Invalid, msg, errors.New(msg)
}
