package compile

import (
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// shop compiles testdata/shop.yaml, the fixture compile's own tests share.
func shop(t *testing.T) *Output {
	t.Helper()
	return shopWith(t, nil)
}

// shopWith compiles testdata/shop.yaml changed by edit.
func shopWith(t *testing.T, edit func(*spec.Platform)) *Output {
	t.Helper()
	d, err := dag.Load("testdata/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(d.Platform)
	}
	out, err := Compile(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tasksByName indexes a WorkflowTemplate's main DAG, keeping the order.
func tasksByName(t *testing.T, wt *wfv1.WorkflowTemplate) (map[string]wfv1.DAGTask, []string) {
	t.Helper()
	byName := map[string]wfv1.DAGTask{}
	var order []string
	for _, task := range wt.Spec.Templates[0].DAG.Tasks {
		if _, dup := byName[task.Name]; dup {
			t.Fatalf("task %s twice", task.Name)
		}
		byName[task.Name] = task
		order = append(order, task.Name)
	}
	return byName, order
}

// args is a task's parameters as name → value; one Argo reads from a
// ConfigMap (valueFrom.configMapKeyRef) as configMapRef says it.
func args(task wfv1.DAGTask) map[string]string {
	m := map[string]string{}
	for _, p := range task.Arguments.Parameters {
		m[p.Name] = argText(p)
	}
	return m
}

func argText(p wfv1.Parameter) string {
	if p.Value == nil && p.ValueFrom != nil && p.ValueFrom.ConfigMapKeyRef != nil {
		return configMapRef(p.ValueFrom.ConfigMapKeyRef.Name, p.ValueFrom.ConfigMapKeyRef.Key)
	}
	return p.Value.String()
}

func configMapRef(name, key string) string { return "configmap:" + name + "/" + key }

// resolved is a task's argument as the step gets it: a ConfigMap entry
// (Argo's valueFrom.configMapKeyRef) read from the compile's ConfigMaps.
func resolved(t *testing.T, out *Output, v string) string {
	t.Helper()
	ref, ok := strings.CutPrefix(v, "configmap:")
	if !ok {
		return v
	}
	name, key, _ := strings.Cut(ref, "/")
	for _, c := range out.ApplicationConfigMaps {
		if c.Name == name {
			if d, ok := c.Data[key]; ok {
				return d
			}
		}
	}
	t.Fatalf("no ConfigMap %s with key %s among the compile's", name, key)
	return ""
}

// platformDefaults are the workflow parameters holding a platform's
// defaults (stepcontract's Platform rules), which effective resolves.
var platformDefaults = map[string]bool{
	stepcontract.WorkflowDefaultSyncTimeout: true, stepcontract.WorkflowDefaultHealthTimeout: true,
	stepcontract.WorkflowDefaultDeadline: true, stepcontract.WorkflowDefaultTimeout: true, stepcontract.WorkflowPlatform: true,
	stepcontract.WorkflowDefaultRetryLimit: true, stepcontract.WorkflowDefaultRetryBackoff: true, stepcontract.WorkflowDefaultRetryFactor: true,
}

// actionOf is the action whose WorkflowTemplate calls a step template.
var actionOf = map[string]dag.Action{
	stepcontract.CmdSyncAndWait: dag.Deploy, stepcontract.CmdTeardown: dag.Teardown, stepcontract.CmdValidate: dag.Validate,
}

// effective is what the called template receives: its input defaults,
// overridden by the task's arguments (dropDefaults leaves out the equal
// ones, so a task's own list alone is not the whole story). A default
// that is the platform's (default-sync-timeout, platform, …) is resolved
// from the WorkflowTemplate calling it, as Argo does; the others (a
// submission's choice, the Argo CD namespace) are left as expressions.
func effective(t *testing.T, out *Output, task wfv1.DAGTask) map[string]string {
	t.Helper()
	m := map[string]string{}
	ref := task.TemplateRef
	if ref == nil {
		t.Fatalf("task %s calls no ClusterWorkflowTemplate", task.Name)
	}
	wf := map[string]string{}
	if wt := out.WorkflowTemplates[actionOf[ref.Template]]; wt != nil {
		wf = paramValues(wt.Spec.Arguments.Parameters)
	}
	found := false
	for _, c := range out.ClusterTemplates {
		for _, tmpl := range c.Spec.Templates {
			if c.Name != ref.Name || tmpl.Name != ref.Template {
				continue
			}
			found = true
			for _, in := range tmpl.Inputs.Parameters {
				if in.Default != nil {
					m[in.Name] = in.Default.String()
					for name := range platformDefaults {
						if v, ok := wf[name]; ok && m[in.Name] == stepcontract.FromWorkflow(name) {
							m[in.Name] = v
						}
					}
				}
			}
		}
	}
	if !found {
		t.Fatalf("task %s calls %s/%s, which no ClusterWorkflowTemplate defines", task.Name, ref.Name, ref.Template)
	}
	for k, v := range args(task) {
		m[k] = resolved(t, out, v)
	}
	return m
}
