package executor

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/argoproj/argo-workflows/v3/workflow/common"
	wfutil "github.com/argoproj/argo-workflows/v3/workflow/util"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/executor/internal/metrics"
	"github.com/deployctl/deployctl/pkg/executor/internal/workflow"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate/livestatetest"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

// WORKFLOW_SUBMIT / --submit: reference by default, inline on request,
// anything else listed with the other problems (exit 3); deploy and
// teardown take it, validate and preflight do not (they submit nothing).
func TestSubmitSetting(t *testing.T) {
	c, err := load(t, ActionDeploy, baseEnv(t))
	if err != nil || c.Submit != SubmitReference {
		t.Fatalf("default: %q, %v", c.Submit, err)
	}
	env := baseEnv(t)
	env["WORKFLOW_SUBMIT"] = "inline"
	if c, err := load(t, ActionDeploy, env); err != nil || c.Submit != SubmitInline {
		t.Errorf("WORKFLOW_SUBMIT=inline: %q, %v", c.Submit, err)
	}
	if c, err := load(t, ActionDeploy, env, "submit", "reference"); err != nil || c.Submit != SubmitReference {
		t.Errorf("the flag wins: %q, %v", c.Submit, err)
	}
	env["WORKFLOW_SUBMIT"] = "auto"
	env["LOG_LEVEL"] = "loud"
	_, err = load(t, ActionDeploy, env)
	if exitcode.Of(err) != exitcode.Invalid {
		t.Errorf("exit %d, want %d", exitcode.Of(err), exitcode.Invalid)
	}
	wantAll(t, problemsOf(t, err), `WORKFLOW_SUBMIT / --submit: "auto": want reference or inline`, "LOG_LEVEL")
	env["CONFIRM"] = "minimal"
	if _, err := load(t, ActionTeardown, env); err == nil || !strings.Contains(err.Error(), "WORKFLOW_SUBMIT") {
		t.Errorf("teardown takes it: %v", err)
	}
	delete(env, "LOG_LEVEL")
	if c, err := load(t, ActionValidate, env); err != nil || c.Submit != "" {
		t.Errorf("validate submits nothing and ignores it: %q, %v", c.Submit, err)
	}
	for _, a := range []Action{ActionValidate, ActionPreflight} {
		for _, f := range Flags(a) {
			if f.Key == "submit" {
				t.Errorf("%s has --submit", a)
			}
		}
	}
}

// inlineRunFor is a run of the test platform's action with WORKFLOW_SUBMIT
// set, its Workflow clients holding objs.
func inlineRunFor(t *testing.T, action Action, submit string, objs ...*wfv1.WorkflowTemplate) (*run, *wffake.Clientset) {
	t.Helper()
	env := baseEnv(t)
	env["WORKFLOW_SUBMIT"], env["CONFIRM"] = submit, "minimal"
	c, err := load(t, action, env)
	if err != nil {
		t.Fatal(err)
	}
	wfs := wffake.NewSimpleClientset()
	for _, o := range objs {
		if _, err := wfs.ArgoprojV1alpha1().WorkflowTemplates(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := &run{cfg: c, cl: &kube.Clients{Workflows: wfs}, out: io.Discard, report: newReport(c, action), compiled: compiled(t, c), poll: time.Hour,
		log: NewLog(io.Discard, string(action), c.LogLevel, c.LogFormat, c.TraceID, c.SpanID, c.redact)}
	r.metrics = metrics.New(string(action), r.report.Platform, c.Environment, errorPhases, c.redact)
	return r, wfs
}

// An inline run is the WorkflowTemplate as the cluster serves it (here
// with a field the compile does not set: the served one is used), the
// run's parameters set by name, and the compiled run's labels and
// annotations, with Argo's workflow-template label; a template missing or
// of another spec hash is refused. By reference nothing is read.
func TestInlineRunIsTheTemplateAsServed(t *testing.T) {
	r, _ := inlineRunFor(t, ActionTeardown, SubmitInline)
	served := r.compiled.WorkflowTemplates[dag.Teardown].DeepCopy()
	served.Spec.Priority = ptr(int32(7)) // as if the API server (or another writer) had it
	r, wfs := inlineRunFor(t, ActionTeardown, SubmitInline, served)
	r.cfg.TraceID = "trace-1"
	params := map[string]string{"confirm": "minimal", "pv-policy": "delete", "crd-policy": "retain"}
	w, err := r.newRun(context.Background(), dag.Teardown, params)
	if err != nil {
		t.Fatal(err)
	}
	if w.Spec.WorkflowTemplateRef != nil || w.Spec.Priority == nil || *w.Spec.Priority != 7 {
		t.Errorf("not the served template inline: ref %v, priority %v", w.Spec.WorkflowTemplateRef, w.Spec.Priority)
	}
	if !reflect.DeepEqual(w.Spec.Templates, served.Spec.Templates) {
		t.Error("the templates are not the served ones")
	}
	got := map[string]string{}
	for _, p := range w.Spec.Arguments.Parameters {
		if _, dup := got[p.Name]; dup {
			t.Errorf("parameter %s twice", p.Name)
		}
		got[p.Name] = p.Value.String()
	}
	for k, v := range params {
		if got[k] != v {
			t.Errorf("parameter %s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) < len(served.Spec.Arguments.Parameters) {
		t.Errorf("template parameters lost: %v", got)
	}
	want := map[string]string{compile.LabelPlatform: "minimal", compile.LabelAction: "teardown", compile.LabelSpecHash: r.compiled.SpecHash,
		common.LabelKeyWorkflowTemplate: served.Name}
	for k, v := range want {
		if w.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, w.Labels[k], v)
		}
	}
	if w.Annotations[AnnotationEnvironment] != "staging" || w.Annotations[AnnotationTraceID] != "trace-1" || w.GenerateName != served.Name+"-" {
		t.Errorf("metadata %+v", w.ObjectMeta)
	}
	if r.compiled.Workflows[dag.Teardown].Spec.WorkflowTemplateRef == nil {
		t.Error("the compiled run was changed")
	}
	if n := len(wfs.Actions()); n != 2 { // the create above, one get
		t.Errorf("%d API calls, want the create and one read", n)
	}

	other := served.DeepCopy()
	other.Labels[compile.LabelSpecHash] = "0123"
	r, _ = inlineRunFor(t, ActionTeardown, SubmitInline, other)
	if _, err := r.newRun(context.Background(), dag.Teardown, params); err == nil || !strings.Contains(err.Error(), `spec hash "0123", not this run's`) {
		t.Errorf("another spec hash: %v", err)
	}
	r, _ = inlineRunFor(t, ActionDeploy, SubmitInline)
	if _, err := r.newRun(context.Background(), dag.Deploy, nil); err == nil || !apierrors.IsNotFound(err) ||
		!strings.Contains(err.Error(), "reading WorkflowTemplate argo/minimal-deploy to submit it inline") {
		t.Errorf("no template: %v", err)
	}
	r, wfs = inlineRunFor(t, ActionDeploy, SubmitReference)
	if w, err := r.newRun(context.Background(), dag.Deploy, nil); err != nil || w.Spec.WorkflowTemplateRef == nil || len(wfs.Actions()) != 0 {
		t.Errorf("by reference: %v, %v, %d API calls", w.Spec.WorkflowTemplateRef, err, len(wfs.Actions()))
	}
}

func ptr[T any](v T) *T { return &v }

// Inline refuses what it cannot inline without Argo's merge: no
// reference, another template, or a spec setting more than parameters.
func TestInlineRefusesWhatItCannotMerge(t *testing.T) {
	r, _ := inlineRunFor(t, ActionDeploy, SubmitInline)
	wt := r.compiled.WorkflowTemplates[dag.Deploy]
	ref := r.compiled.Workflows[dag.Deploy]
	if _, err := Inline(ref, wt); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*wfv1.Workflow){
		"no reference":     func(w *wfv1.Workflow) { w.Spec.WorkflowTemplateRef = nil },
		"another template": func(w *wfv1.Workflow) { w.Spec.WorkflowTemplateRef.Name = "other" },
		"cluster scope":    func(w *wfv1.Workflow) { w.Spec.WorkflowTemplateRef.ClusterScope = true },
		"more than params": func(w *wfv1.Workflow) { w.Spec.ServiceAccountName = "x" },
	} {
		w := ref.DeepCopy()
		edit(w)
		if _, err := Inline(w, wt); err == nil {
			t.Errorf("%s: inlined", name)
		}
	}
}

// configMapStore is what the workflow-controller's informer holds.
type configMapStore map[string]*corev1.ConfigMap

func (c configMapStore) GetByKey(key string) (any, bool, error) {
	cm, ok := c[key]
	return cm, ok, nil
}

// resolvedNodes runs Argo Workflows' own code on a Workflow as the
// controller does: its execution spec (workflow/util.JoinWorkflowSpec: for
// a reference, the Workflow's spec over the template's, as setStoredWfSpec
// merges them; inline, the spec alone), the global parameters from it, and
// every step task's arguments (workflow/common.ProcessArgs) against its
// ClusterWorkflowTemplate: the resolved templates, JSON, by task.
func resolvedNodes(t *testing.T, w *wfv1.Workflow, wt *wfv1.WorkflowTemplate, templates map[string]wfv1.Template, store configMapStore) map[string]string {
	t.Helper()
	var from *wfv1.WorkflowSpec
	if w.Spec.WorkflowTemplateRef != nil {
		from = &wt.Spec
	}
	exec, err := wfutil.JoinWorkflowSpec(&w.Spec, from, nil)
	if err != nil {
		t.Fatal(err)
	}
	global := common.Parameters{}
	for _, p := range exec.Spec.Arguments.Parameters {
		if p.Value != nil {
			global["workflow.parameters."+p.Name] = p.Value.String()
		}
	}
	out := map[string]string{}
	for _, task := range exec.Spec.Templates[0].DAG.Tasks {
		if task.TemplateRef == nil {
			continue
		}
		tmpl := templates[task.TemplateRef.Name]
		got, err := common.ProcessArgs(&tmpl, &task.Arguments, global, common.Parameters{}, false, wt.Namespace, store)
		if err != nil {
			t.Fatalf("%s task %s: Argo refuses its arguments: %v", wt.Name, task.Name, err)
		}
		b, _ := json.Marshal(got)
		out[task.Name] = string(b)
	}
	return out
}

// Argo's own code (v3.7.18, linked) resolves every deploy and teardown
// node of an inline run exactly as by reference, in both step modes, for
// every example: the same inputs, the run's parameters included. The
// comparison can fail: an inline teardown without the run's parameters
// resolves differently.
func TestArgoResolvesAnInlineRunAsByReference(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	params := map[dag.Action]map[string]string{dag.Teardown: {"confirm": "", "pv-policy": "delete", "crd-policy": "delete"}}
	for _, file := range files {
		for _, mode := range []spec.StepMode{spec.StepModePod, spec.StepModePlugin} {
			d, err := dag.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			d.Platform.Spec.Workflow.StepMode = mode
			out, err := compile.Compile(d, "platform")
			if err != nil {
				t.Fatal(err)
			}
			store := configMapStore{}
			for _, c := range out.ApplicationConfigMaps {
				store[c.Namespace+"/"+c.Name] = c
			}
			templates := map[string]wfv1.Template{}
			for _, c := range out.ClusterTemplates {
				templates[c.Name] = c.Spec.Templates[0]
			}
			for _, action := range []dag.Action{dag.Deploy, dag.Teardown} {
				wt := out.WorkflowTemplates[action]
				ref := out.Workflows[action].DeepCopy()
				for k, v := range params[action] {
					if k == "confirm" {
						v = out.Platform
					}
					ref.Spec.Arguments.Parameters = append(ref.Spec.Arguments.Parameters, wfv1.Parameter{Name: k, Value: wfv1.AnyStringPtr(v)})
				}
				in, err := Inline(ref, wt)
				if err != nil {
					t.Fatal(err)
				}
				byRef, inline := resolvedNodes(t, ref, wt, templates, store), resolvedNodes(t, in, wt, templates, store)
				if len(byRef) == 0 || len(byRef) != len(inline) {
					t.Fatalf("%s (%s) %s: %d nodes by reference, %d inline", file, mode, action, len(byRef), len(inline))
				}
				for task, want := range byRef {
					if inline[task] != want {
						t.Errorf("%s (%s) %s task %s resolves otherwise inline:\n%s\nby reference:\n%s", file, mode, action, task, inline[task], want)
					}
				}
				if action != dag.Teardown {
					continue
				}
				bare, err := Inline(out.Workflows[action], wt)
				if err != nil {
					t.Fatal(err)
				}
				differ := 0
				for task, v := range resolvedNodes(t, bare, wt, templates, store) {
					if v != byRef[task] {
						differ++
					}
				}
				if differ == 0 {
					t.Errorf("%s (%s): without the run's parameters every node resolves the same: the comparison proves nothing", file, mode)
				}
			}
		}
	}
}

// A failed inline run resumes as one by reference: Argo's retry works on
// the run alone (its spec inline), resetting the failed node and what never
// ran, keeping the succeeded apps.
func TestInlineRunResumes(t *testing.T) {
	ref := livestatetest.FailedDeploy(t)
	r, _ := inlineRunFor(t, ActionDeploy, SubmitInline)
	in := ref.DeepCopy()
	in.Spec = *r.compiled.WorkflowTemplates[dag.Deploy].Spec.DeepCopy()
	for _, w := range []*wfv1.Workflow{ref, in} {
		plan, err := workflow.PlanRetry(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"database", "web"}; !reflect.DeepEqual(plan.Reset, want) || plan.Workflow.Spec.WorkflowTemplateRef != w.Spec.WorkflowTemplateRef && w.Spec.WorkflowTemplateRef == nil {
			t.Errorf("reset %v, want %v", plan.Reset, want)
		}
		if w == in && len(plan.Workflow.Spec.Templates) == 0 {
			t.Error("the retried inline run lost its spec")
		}
	}
}

// A controller whose templateReferencing is Strict or Secure refuses an
// inline run before any node: the executor deletes that run (left, the
// next deploy would resume it, refused again) and exits 3 with the fix.
// A run that ended Error for another reason is not deleted.
func TestInlineRefusedByTheController(t *testing.T) {
	for _, action := range []Action{ActionDeploy, ActionTeardown} {
		r, wfs := inlineRunFor(t, action, SubmitInline)
		w, err := Inline(r.compiled.Workflows[dag.Action(action)], r.compiled.WorkflowTemplates[dag.Action(action)])
		if err != nil {
			t.Fatal(err)
		}
		w.Name, w.Namespace = "minimal-"+string(action)+"-x1", "argo"
		w.Status.Phase = wfv1.WorkflowError
		w.Status.Message = "workflows must use workflowTemplateRef to be executed when the controller is in reference mode"
		if _, err := wfs.ArgoprojV1alpha1().Workflows("argo").Create(context.Background(), w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r.report.Workflow = &report.WorkflowRun{Namespace: "argo", Name: w.Name}
		var code int
		var summary string
		if action == ActionDeploy {
			code, summary, _ = r.followAndReport(context.Background(), w, r.componentRefs(dag.Deploy), nil)
		} else {
			var ended bool
			_, ended, code, summary, _ = r.followRun(context.Background(), w, r.componentRefs(dag.Teardown), dag.Teardown, nil)
			if !ended {
				t.Error("teardown: the refused run does not end the action")
			}
		}
		if code != exitcode.Invalid || !strings.Contains(summary, "refused the inline run") || !strings.Contains(summary, "was deleted") {
			t.Errorf("%s: exit %d: %s", action, code, summary)
		}
		if recs := strings.Join(r.report.Recommendations, "\n"); !strings.Contains(recs, "WORKFLOW_SUBMIT=reference") {
			t.Errorf("%s: recommendations lack the fix:\n%s", action, recs)
		}
		if _, err := wfs.ArgoprojV1alpha1().Workflows("argo").Get(context.Background(), w.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the refused run is still there: %v", action, err)
		}
	}
	other := &wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowError, Message: "invalid spec: something else"}}
	if refusedInline(other) {
		t.Error("an Error of another kind taken for the refusal")
	}
	byRef := &wfv1.Workflow{Spec: wfv1.WorkflowSpec{WorkflowTemplateRef: &wfv1.WorkflowTemplateRef{Name: "x"}},
		Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowError, Message: "workflows must use workflowTemplateRef"}}
	if refusedInline(byRef) {
		t.Error("a run by reference taken for a refused inline run")
	}
}
