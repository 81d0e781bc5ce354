package compile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/internal/duration"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/step/cmdline"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// The step contract's round trip: a value of every step command, each
// field set apart from every default, goes through what the compiler
// writes (the task's arguments, the ClusterWorkflowTemplate of each step
// mode) and what Argo does with it (inputs and workflow parameters
// substituted), and is read back as deploystep reads it (cmdline.Parse of
// the pod's container or the plugin's call) and as Argo reads its own
// part (activeDeadlineSeconds, retryStrategy): the same value, field for
// field. A field without a rule, a rule no rendering carries, or a reader
// that disagrees fails it.

// contractSamples are one value per command, every field set to a value
// no default has (checked below), the step-only fields included.
func contractSamples() []stepcontract.Command {
	return []stepcontract.Command{
		&stepcontract.SyncAndWait{
			App:                  "web",
			ManifestBase64:       "eyJraW5kIjoiQXBwbGljYXRpb24ifQ==",
			ManifestFile:         "/manifests/web.json",
			SyncTimeout:          7 * time.Minute,
			HealthTimeout:        11*time.Minute + 30*time.Second,
			Checks:               []string{"resource:apps/Deployment/web/web", "http:http://web.web.svc/healthz=200,204"},
			AllowSuspended:       true,
			HealthCustomizations: []string{"example.com/Widget=sha256:" + strings.Repeat("ab", 32), "ConfigMap=sha256:" + strings.Repeat("cd", 32)},
			SyncID:               "0123456789abcdef",
			AppNamespace:         "team-a",
			Retry:                stepcontract.Retry{Limit: 7, Backoff: 42 * time.Second, Factor: 3},
		},
		&stepcontract.Validate{
			Apps:         []string{"web", "db"},
			AppNamespace: "team-b",
			Retry:        stepcontract.Retry{Limit: 1, Backoff: time.Second, Factor: 1},
		},
		&stepcontract.Teardown{
			App:          "db",
			Platform:     "shop",
			Confirm:      "shop",
			PVPolicy:     stepcontract.PolicyDelete,
			CRDPolicy:    stepcontract.PolicyDelete,
			Timeout:      25 * time.Minute,
			Cascade:      false,
			AppNamespace: "team-c",
			Retry:        stepcontract.Retry{Limit: 0, Backoff: 5 * time.Second, Factor: 4},
		},
	}
}

// Every field of every command and of the connection has exactly one
// rule: a new field without one fails here.
func TestEveryFieldHasOneRule(t *testing.T) {
	type bound struct {
		v      reflect.Value
		params []stepcontract.Param
	}
	var all []bound
	for _, c := range contractSamples() {
		all = append(all, bound{reflect.ValueOf(c).Elem(), c.Params()})
	}
	conn := &stepcontract.Connection{}
	all = append(all, bound{reflect.ValueOf(conn).Elem(), conn.Params()})
	for _, b := range all {
		rules := map[uintptr]int{}
		for _, p := range b.params {
			if p.Ptr() != nil {
				rules[reflect.ValueOf(p.Ptr()).Pointer()]++
			}
		}
		eachField(b.v, b.v.Type().Name(), func(name string, f reflect.Value) {
			switch n := rules[f.Addr().Pointer()]; n {
			case 1:
			case 0:
				t.Errorf("%s has no rule: give it one in its type's Params", name)
			default:
				t.Errorf("%s has %d rules", name, n)
			}
		})
	}
}

// eachField calls f for every field, descending into Retry.
func eachField(v reflect.Value, prefix string, f func(string, reflect.Value)) {
	for i := 0; i < v.NumField(); i++ {
		fv, name := v.Field(i), prefix+"."+v.Type().Field(i).Name
		if fv.Type() == reflect.TypeOf(stepcontract.Retry{}) {
			eachField(fv, name, f)
			continue
		}
		f(name, fv)
	}
}

// The samples prove something only if no default could stand in for a
// field: every field differs from its input's default and deploystep's,
// and a text field or list is not empty.
func TestContractSamplesAvoidDefaults(t *testing.T) {
	for _, c := range contractSamples() {
		for _, p := range c.Params() {
			if p.Ptr() == nil {
				continue
			}
			text, err := p.Text()
			if err != nil {
				t.Fatal(err)
			}
			switch p.Ptr().(type) {
			case *string, *[]string, *time.Duration:
				if p.IsZero() {
					t.Errorf("%s %s: the sample leaves it empty", c.Command(), p.Name())
				}
			}
			if (p.Default != nil && *p.Default == text) || (p.StepDefault != "" && p.StepDefault == text) {
				t.Errorf("%s %s: the sample's %q is a default", c.Command(), p.Name(), text)
			}
		}
	}
}

// contractWorkflow is the workflow parameters of a shop-like platform,
// the sample's health customizations among them.
func contractWorkflow(t *testing.T, c stepcontract.Command) (map[string]string, stepcontract.Connection) {
	t.Helper()
	p := &spec.Platform{Spec: spec.PlatformSpec{ArgoCD: spec.ArgoCD{
		Server: "argocd.example:8443", Namespace: "gitops", Plaintext: true, InsecureSkipVerify: true, RootPath: "/argo-cd",
		TokenSecret: spec.SecretKeyRef{Name: "tok", Key: "t"}, CASecret: &spec.SecretKeyRef{Name: "ca", Key: "bundle.pem"},
	}}}
	wf := map[string]string{}
	for _, w := range connectionParams(p) {
		wf[w.Name] = w.Value.String()
	}
	want := stepcontract.Connection{
		Server: "argocd.example:8443", AppNamespace: "gitops", Plaintext: true, InsecureSkipVerify: true, RootPath: "/argo-cd",
		TokenFile: stepcontract.TokenFile, CAFile: caMount + "/ca.crt", ResultFile: stepcontract.ResultFile, RequestTimeout: 30 * time.Second,
	}
	if s, ok := c.(*stepcontract.SyncAndWait); ok {
		wf[stepcontract.WorkflowHealthCustomizations] = strings.Join(s.HealthCustomizations, "\n")
	}
	return wf, want
}

// resolver substitutes {{inputs.parameters.X}} and
// {{workflow.parameters.X}} as Argo does: a task's arguments first see
// the workflow's parameters, then the template sees both.
type resolver struct {
	t        *testing.T
	inputs   map[string]string
	workflow map[string]string
}

func (r resolver) subst(s string) string {
	r.t.Helper()
	for k, v := range r.inputs {
		s = strings.ReplaceAll(s, stepcontract.FromInput(k), v)
	}
	for k, v := range r.workflow {
		s = strings.ReplaceAll(s, stepcontract.FromWorkflow(k), v)
	}
	if strings.Contains(s, "{{") {
		r.t.Errorf("%q: an expression Argo would not resolve", s)
	}
	return s
}

// callOf is deploystep's command line and environment in a template: the
// pod's container, or the plugin's call.
func callOf(t *testing.T, tmpl wfv1.Template) stepcontract.Call {
	t.Helper()
	var call stepcontract.Call
	if tmpl.Plugin != nil {
		var body map[string]stepcontract.Call
		dec := json.NewDecoder(strings.NewReader(string(tmpl.Plugin.Value)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			t.Fatal(err)
		}
		return body[stepcontract.PluginName]
	}
	call.Args = tmpl.Container.Args
	for _, e := range tmpl.Container.Env {
		call.Env = append(call.Env, stepcontract.EnvVar{Name: e.Name, Value: e.Value})
	}
	return call
}

// parse is deploystep's reading of call as Argo hands it over (r
// substituted), with extra arguments after the template's.
func (r resolver) parse(call stepcontract.Call, extra []string) (*cmdline.Invocation, error) {
	argv := make([]string, 0, len(call.Args)+len(extra))
	for _, a := range call.Args {
		argv = append(argv, r.subst(a))
	}
	argv = append(argv, extra...)
	env := map[string]string{}
	for _, e := range call.Env {
		env[e.Name] = r.subst(e.Value)
	}
	inv, err := cmdline.Parse(argv, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return inv, fmt.Errorf("deploystep refuses %q: %w", argv, err)
	}
	return inv, nil
}

// roundTrip renders c as a task of the template tmpl and reads it back:
// deploystep's invocation and Argo's deadline and retry.
func roundTrip(t *testing.T, c stepcontract.Command, tmpl wfv1.Template, wf map[string]string, extraArgs []string) (*cmdline.Invocation, *time.Duration, stepcontract.Retry) {
	t.Helper()
	args, err := stepcontract.Args(c, wf)
	if err != nil {
		t.Fatal(err)
	}
	r := resolver{t: t, inputs: map[string]string{}, workflow: wf}
	for _, in := range tmpl.Inputs.Parameters {
		if in.Default != nil {
			r.inputs[in.Name] = in.Default.String()
		}
	}
	declared := map[string]bool{}
	for _, in := range tmpl.Inputs.Parameters {
		declared[in.Name] = true
	}
	for _, a := range args {
		if !declared[a.Name] {
			t.Errorf("%s: the task passes %s, which the template does not take", c.Command(), a.Name)
		}
		r.inputs[a.Name] = resolver{t: t, workflow: wf}.subst(a.Value)
	}
	for _, in := range tmpl.Inputs.Parameters {
		if _, ok := r.inputs[in.Name]; !ok {
			t.Errorf("%s: input %s has neither a default nor an argument", c.Command(), in.Name)
		}
	}
	for k, v := range r.inputs { // an input's default may name a workflow parameter
		r.inputs[k] = resolver{t: t, workflow: wf}.subst(v)
	}

	inv, err := r.parse(callOf(t, tmpl), extraArgs)
	if err != nil {
		t.Fatalf("%s: %v", c.Command(), err)
	}

	var deadline *time.Duration
	if a := tmpl.ActiveDeadlineSeconds; a != nil {
		n, err := strconv.Atoi(r.subst(a.String()))
		if err != nil {
			t.Fatalf("activeDeadlineSeconds: %v", err)
		}
		d := time.Duration(n) * time.Second
		deadline = &d
	}
	rs := tmpl.RetryStrategy
	limit, err := strconv.Atoi(r.subst(rs.Limit.String()))
	if err != nil {
		t.Fatal(err)
	}
	backoff, err := duration.Parse(r.subst(rs.Backoff.Duration))
	if err != nil {
		t.Fatal(err)
	}
	factor, err := strconv.Atoi(r.subst(rs.Backoff.Factor.String()))
	if err != nil {
		t.Fatal(err)
	}
	return inv, deadline, stepcontract.Retry{Limit: limit, Backoff: backoff, Factor: factor}
}

// parsed is the command value deploystep read; its Global rules (the
// app-namespace) are the connection's.
func parsed(inv *cmdline.Invocation, c stepcontract.Command) stepcontract.Command {
	switch c.(type) {
	case *stepcontract.SyncAndWait:
		v := inv.Sync
		v.AppNamespace = inv.Global.AppNamespace
		return &v
	case *stepcontract.Validate:
		v := inv.Validate
		v.AppNamespace = inv.Global.AppNamespace
		return &v
	case *stepcontract.Teardown:
		v := inv.Teardown
		v.AppNamespace = inv.Global.AppNamespace
		return &v
	}
	panic(fmt.Sprintf("%T", c))
}

// clone copies a sample command.
func clone(c stepcontract.Command) stepcontract.Command {
	v := reflect.New(reflect.TypeOf(c).Elem())
	v.Elem().Set(reflect.ValueOf(c).Elem())
	return v.Interface().(stepcontract.Command)
}

// templateOf finds a command's template among the CWTs of a step mode.
func templateOf(t *testing.T, plugin bool, command string) wfv1.Template {
	t.Helper()
	w := spec.Workflow{Image: "registry.example/deploystep:1"}
	if plugin {
		w.StepMode = spec.StepModePlugin
	}
	cwts, err := ClusterWorkflowTemplates(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cwts {
		if c.Spec.Templates[0].Name == command {
			return c.Spec.Templates[0]
		}
	}
	t.Fatalf("no template for %s", command)
	return wfv1.Template{}
}

func TestStepContractRoundTrip(t *testing.T) {
	for _, plugin := range []bool{false, true} {
		for _, sample := range contractSamples() {
			name := fmt.Sprintf("%s/plugin=%v", sample.Command(), plugin)
			t.Run(name, func(t *testing.T) {
				tmpl := templateOf(t, plugin, sample.Command())
				wf, wantConn := contractWorkflow(t, sample)
				// What a template carries: every field but the step-only
				// ones, which no template sets.
				want := clone(sample)
				var stepOnly []stepcontract.Param
				for i, p := range want.Params() {
					if p.Reader == stepcontract.StepOnly {
						stepOnly = append(stepOnly, sample.Params()[i])
						reflect.ValueOf(p.Ptr()).Elem().SetZero()
					}
				}
				inv, deadline, retry := roundTrip(t, want, tmpl, wf, nil)
				got := parsed(inv, want)
				// Argo's part, as Argo reads it.
				reflect.ValueOf(got).Elem().FieldByName("Retry").Set(reflect.ValueOf(retry))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("read back\n%+v\nwant\n%+v", got, want)
				}
				wantConn.AppNamespace = reflect.ValueOf(want).Elem().FieldByName("AppNamespace").String()
				if inv.Global != wantConn {
					t.Errorf("connection read back\n%+v\nwant\n%+v", inv.Global, wantConn)
				}
				checkDeadline(t, want, deadline, plugin)

				// The step-only fields, each as a person (or the plugin)
				// passes it: the flag on the command line.
				for _, p := range stepOnly {
					text, _ := p.Text()
					with := clone(want)
					if s, ok := with.(*stepcontract.SyncAndWait); ok && p.Flag == "manifest" {
						s.ManifestBase64 = "" // --manifest and --manifest-base64 exclude each other
					}
					for _, q := range with.Params() {
						if q.Flag == p.Flag {
							if err := q.SetText(text); err != nil {
								t.Fatal(err)
							}
						}
					}
					inv, _, retry := roundTrip(t, with, tmpl, wf, []string{"--" + p.Flag + "=" + text})
					got := parsed(inv, with)
					reflect.ValueOf(got).Elem().FieldByName("Retry").Set(reflect.ValueOf(retry))
					if !reflect.DeepEqual(got, with) {
						t.Errorf("--%s: read back\n%+v\nwant\n%+v", p.Flag, got, with)
					}
				}
			})
		}
	}
}

// checkDeadline: a pod attempt's activeDeadlineSeconds is the command's
// deadline; a plugin template has none (Argo ignores it; the step bounds
// itself by its own limit).
func checkDeadline(t *testing.T, c stepcontract.Command, got *time.Duration, plugin bool) {
	t.Helper()
	var want time.Duration
	var err error
	switch v := c.(type) {
	case *stepcontract.SyncAndWait:
		want, err = v.Deadline()
	case *stepcontract.Teardown:
		want, err = v.Deadline()
	case *stepcontract.Validate:
		want = stepcontract.ValidateDeadline
	}
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case plugin && got != nil:
		t.Errorf("the plugin template has activeDeadlineSeconds %v, which Argo ignores", *got)
	case !plugin && (got == nil || *got != want):
		t.Errorf("activeDeadlineSeconds %v, want %v", got, want)
	}
}

// Every task the compiler makes, in both step modes, is an invocation
// deploystep accepts, of the task's own app.
func TestCompiledTasksParse(t *testing.T) {
	for _, plugin := range []bool{false, true} {
		out := shopWith(t, func(p *spec.Platform) {
			if plugin {
				p.Spec.Workflow.StepMode = spec.StepModePlugin
			}
		})
		templates := map[string]wfv1.Template{}
		for _, c := range out.ClusterTemplates {
			templates[c.Name+"/"+c.Spec.Templates[0].Name] = c.Spec.Templates[0]
		}
		for _, action := range Actions {
			wt := out.WorkflowTemplates[action]
			wf := map[string]string{}
			for _, p := range wt.Spec.Arguments.Parameters {
				if p.Value != nil {
					wf[p.Name] = p.Value.String()
				}
			}
			if action == dag.Teardown {
				wf[stepcontract.WorkflowConfirm] = out.Platform
			}
			tasks, _ := tasksByName(t, wt)
			for name, task := range tasks {
				if task.TemplateRef == nil {
					continue
				}
				tmpl, ok := templates[task.TemplateRef.Name+"/"+task.TemplateRef.Template]
				if !ok {
					t.Fatalf("%s: no template %s", name, task.TemplateRef.Name)
				}
				r := resolver{t: t, inputs: map[string]string{}, workflow: wf}
				for k, v := range effective(t, out, task) {
					r.inputs[k] = resolver{t: t, workflow: wf}.subst(v)
				}
				if (tmpl.Plugin != nil) != plugin {
					t.Fatalf("%s: a template of the other step mode", name)
				}
				inv, err := r.parse(callOf(t, tmpl), nil)
				if err != nil {
					t.Errorf("%s %s (plugin %v): %v", action, name, plugin, err)
					continue
				}
				app := r.inputs[stepcontract.InputApp] + r.inputs[stepcontract.InputApps]
				if got := inv.Sync.App + inv.Teardown.App + strings.Join(inv.Validate.Apps, "\n"); got != app {
					t.Errorf("%s %s: the step reads app %q, the task passes %q", action, name, got, app)
				}
			}
		}
	}
}

// The templates' retry defaults are the spec's built-in retry: a task
// with the built-in policy (validate's, the handoff's) passes none.
func TestTemplateRetryIsTheSpecDefault(t *testing.T) {
	if got := retryOf(&spec.DefaultRetry); got != stepcontract.DefaultRetry {
		t.Errorf("spec.DefaultRetry is %+v as the templates take it, their defaults %+v", got, stepcontract.DefaultRetry)
	}
}

// The files the contract names for deploystep are where the pod template
// puts them: the token in its volume, the result in the memory volume.
func TestContractFilesAreMounted(t *testing.T) {
	tmpl := templateOf(t, false, stepcontract.CmdSyncAndWait)
	mounted := func(file string) bool {
		for _, m := range tmpl.Container.VolumeMounts {
			if strings.HasPrefix(file, m.MountPath+"/") {
				return true
			}
		}
		return false
	}
	for _, f := range []string{stepcontract.TokenFile, stepcontract.ResultFile, caMount + "/ca.crt"} {
		if !mounted(f) {
			t.Errorf("%s is on no volume of the pod", f)
		}
	}
	if stepcontract.TokenFile != tokenMount+"/token" {
		t.Errorf("the token file %s is not the token volume's item %s/token", stepcontract.TokenFile, tokenMount)
	}
}
