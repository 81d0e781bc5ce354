package generate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/common"
	corev1 "k8s.io/api/core/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// configMaps is what the workflow-controller's informer holds: the
// ConfigMaps by namespace/name.
type configMaps map[string]*corev1.ConfigMap

func (c configMaps) GetByKey(key string) (any, bool, error) {
	cm, ok := c[key]
	return cm, ok, nil
}

// compiledFor compiles an example in a step mode (edit, if not nil,
// changes its DAG first) and returns what Argo's argument processing
// reads: the compile, its Application ConfigMaps as the controller's
// informer holds them, and the step templates by ClusterWorkflowTemplate.
func compiledFor(t *testing.T, file string, mode spec.StepMode, edit func(*dag.DAG)) (*compile.Output, configMaps, map[string]wfv1.Template) {
	t.Helper()
	d, err := dag.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	d.Platform.Spec.Workflow.StepMode = mode
	if edit != nil {
		edit(d)
	}
	out, err := compile.Compile(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	store := configMaps{}
	for _, c := range out.ApplicationConfigMaps {
		store[c.Namespace+"/"+c.Name] = c
	}
	templates := map[string]wfv1.Template{}
	for _, c := range out.ClusterTemplates {
		templates[c.Name] = c.Spec.Templates[0]
	}
	return out, store, templates
}

// eachStepTask runs Argo's argument processing on every step task of wt
// as the controller does when the node starts (workflow parameters: wt's,
// then extra), stopping the test at a refusal. resolve processes the task
// again with other ConfigMaps.
func eachStepTask(t *testing.T, wt *wfv1.WorkflowTemplate, templates map[string]wfv1.Template, store configMaps, extra map[string]string,
	f func(task wfv1.DAGTask, got *wfv1.Template, resolve func(configMaps) error)) {
	t.Helper()
	global := common.Parameters{}
	for _, p := range wt.Spec.Arguments.Parameters {
		if p.Value != nil {
			global["workflow.parameters."+p.Name] = p.Value.String()
		}
	}
	for k, v := range extra {
		global["workflow.parameters."+k] = v
	}
	for _, task := range wt.Spec.Templates[0].DAG.Tasks {
		if task.TemplateRef == nil {
			continue
		}
		tmpl := templates[task.TemplateRef.Name]
		resolve := func(cms configMaps) error {
			_, err := common.ProcessArgs(&tmpl, &task.Arguments, global, common.Parameters{}, false, wt.Namespace, cms)
			return err
		}
		got, err := common.ProcessArgs(&tmpl, &task.Arguments, global, common.Parameters{}, false, wt.Namespace, store)
		if err != nil {
			t.Fatalf("%s task %s: Argo refuses its arguments: %v", wt.Name, task.Name, err)
		}
		f(task, got, resolve)
	}
}

// Argo Workflows' own argument processing (workflow/common.ProcessArgs,
// what the controller runs when a node starts, the same in v3.7 and v4)
// gives every deploy node, in both step modes, exactly its Application
// from the ConfigMaps generate writes: their label, namespace, names and
// keys are the ones Argo reads (issue 24). Without the ConfigMaps the node
// is refused, naming the ConfigMap.
func TestArgoResolvesTheApplicationsFromTheConfigMaps(t *testing.T) {
	for _, file := range examples(t) {
		for _, mode := range []spec.StepMode{spec.StepModePod, spec.StepModePlugin} {
			out, store, templates := compiledFor(t, file, mode, nil)
			apps := map[string]*compile.Application{}
			for _, a := range out.Applications {
				apps[a.Name] = a
			}
			if out.Root != nil {
				apps[out.Root.Name] = out.Root
			}
			n := 0
			eachStepTask(t, out.WorkflowTemplates[dag.Deploy], templates, store, nil, func(task wfv1.DAGTask, got *wfv1.Template, resolve func(configMaps) error) {
				app := got.Inputs.GetParameterByName("app").Value.String()
				raw, err := base64.StdEncoding.DecodeString(got.Inputs.GetParameterByName("manifest-base64").Value.String())
				if err != nil {
					t.Fatalf("%s task %s: %v", file, task.Name, err)
				}
				want, _ := json.Marshal(apps[app])
				var back compile.Application
				if err := json.Unmarshal(raw, &back); err != nil {
					t.Fatal(err)
				}
				if again, _ := json.Marshal(&back); apps[app] == nil || string(again) != string(want) {
					t.Errorf("%s task %s gets another Application than %s's", file, task.Name, app)
				}
				n++
				if n == 1 {
					err := resolve(configMaps{})
					if want := fmt.Sprintf("ConfigMap '%s' does not exist", out.ApplicationConfigMaps[0].Name); err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("without the ConfigMaps: %v, want an error saying %q", err, want)
					}
				}
			})
			if n != len(apps) {
				t.Errorf("%s: %d deploy nodes resolved, %d Applications", file, n, len(apps))
			}
		}
	}
}

// Argo's own argument processing gives every deploy and teardown node its
// app's own timeouts, deadline and retry, and teardown its platform and
// confirmation, though a task passes them only where they differ from the
// platform's defaults, which the WorkflowTemplate holds as workflow
// parameters (issue 24). One app of each example gets timeouts and a
// retry of its own (passed), the others keep the defaults (left out):
// both kinds resolve to the app's values.
func TestArgoResolvesThePlatformDefaults(t *testing.T) {
	for _, file := range examples(t) {
		for _, mode := range []spec.StepMode{spec.StepModePod, spec.StepModePlugin} {
			var d *dag.DAG
			var own string
			out, store, templates := compiledFor(t, file, mode, func(g *dag.DAG) {
				d, own = g, g.Apps()[0]
				d.Node(own).App.Timeouts = &spec.Timeouts{Sync: spec.Duration{Duration: 7 * time.Minute}, Health: spec.Duration{Duration: 9 * time.Minute}}
				d.Node(own).App.Retry = &spec.Retry{Limit: 6, Backoff: spec.Duration{Duration: 20 * time.Second}, Factor: 3}
			})
			passed, omitted := 0, 0
			for _, action := range []dag.Action{dag.Deploy, dag.Teardown} {
				confirm := map[string]string{"confirm": out.Platform}
				eachStepTask(t, out.WorkflowTemplates[action], templates, store, confirm, func(task wfv1.DAGTask, got *wfv1.Template, _ func(configMaps) error) {
					a := &spec.App{Timeouts: &spec.DefaultTimeouts, Retry: &spec.DefaultRetry} // the handoff's
					if n := d.Node(task.Name); n != nil && n.App != nil {
						a = n.App
					}
					limit := a.Timeouts.Sync.Duration + a.Timeouts.Health.Duration
					want := map[string]string{
						"retry-limit":      strconv.Itoa(a.Retry.Limit),
						"retry-backoff":    a.Retry.Backoff.Duration.String(),
						"retry-factor":     strconv.Itoa(max(a.Retry.Factor, 1)),
						"deadline-seconds": strconv.Itoa(int((limit + 2*time.Minute) / time.Second)),
					}
					if action == dag.Deploy {
						want["sync-timeout"], want["health-timeout"] = a.Timeouts.Sync.Duration.String(), a.Timeouts.Health.Duration.String()
					} else {
						want["timeout"], want["platform"], want["confirm"] = limit.String(), out.Platform, out.Platform
					}
					for name, v := range want {
						if p := got.Inputs.GetParameterByName(name); p == nil || p.Value == nil || p.Value.String() != v {
							t.Errorf("%s (%s) %s task %s: %s resolves to %v, want %s", file, mode, action, task.Name, name, p, v)
						}
						if task.Arguments.GetParameterByName(name) != nil {
							passed++
						} else {
							omitted++
						}
					}
					if task.Name == own && task.Arguments.GetParameterByName("retry-limit") == nil {
						t.Errorf("%s %s task %s: its own retry is not passed", file, action, own)
					}
				})
			}
			if passed == 0 || omitted == 0 {
				t.Errorf("%s (%s): %d values passed, %d left out: both kinds should occur", file, mode, passed, omitted)
			}
		}
	}
}
