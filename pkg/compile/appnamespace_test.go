package compile

import (
	"strings"
	"testing"

	argocdrbac "github.com/argoproj/argo-cd/v2/util/rbac"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// nsSpec: app a in Argo CD's namespace, b and c in team-a (c in project
// team), d in team-b; b and d in stack s2 with a.
const nsSpec = `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: p}
spec:
  argocd: {namespace: argocd, server: argocd-server.argocd.svc:443}
  workflow: {image: example.com/deploystep:1}
  defaults:
    source: {repoURL: https://git.example.com/p.git, targetRevision: main}
  stacks:
  - name: s1
    apps:
    - {name: a, source: {path: a}}
    - {name: b, applicationNamespace: team-a, source: {path: b}, dependsOn: [a]}
    - {name: c, applicationNamespace: team-a, project: team, source: {path: c}}
  - name: s2
    apps:
    - {name: d, applicationNamespace: team-b, source: {path: d}}
    - {name: e, applicationNamespace: argocd, source: {path: e}}
`

// compileSrc loads, builds and compiles a spec; only Compile may fail.
func compileSrc(t *testing.T, src string) (*Output, error) {
	t.Helper()
	doc, err := spec.Load("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d, err := dag.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	return Compile(d, "platform")
}

func mustCompile(t *testing.T, src string) *Output {
	t.Helper()
	out, err := compileSrc(t, src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func taskParams(t wfv1.DAGTask) map[string]string {
	m := map[string]string{}
	for _, p := range t.Arguments.Parameters {
		m[p.Name] = argText(p)
	}
	return m
}

func TestApplicationNamespace(t *testing.T) {
	out := mustCompile(t, nsSpec)
	want := map[string]string{"a": "argocd", "b": "team-a", "c": "team-a", "d": "team-b", "e": "argocd"}
	for _, a := range out.Applications {
		if a.Namespace != want[a.Name] {
			t.Errorf("Application %s in namespace %q, want %q", a.Name, a.Namespace, want[a.Name])
		}
	}
	// Deploy and teardown pass the namespace to the app's step; an app
	// without the field passes nothing (the CWT's default: argocd-namespace).
	for _, action := range []dag.Action{dag.Deploy, dag.Teardown} {
		for _, task := range out.WorkflowTemplates[action].Spec.Templates[0].DAG.Tasks {
			ns, ok := taskParams(task)["app-namespace"]
			wantNS := map[string]string{"b": "team-a", "c": "team-a", "d": "team-b", "e": "argocd"}[task.Name]
			if ns != wantNS || ok != (wantNS != "") {
				t.Errorf("%s task %s: app-namespace %q (set %v), want %q", action, task.Name, ns, ok, wantNS)
			}
		}
	}
	// Validate: one task per stack and namespace.
	got := map[string]string{}
	for _, task := range out.WorkflowTemplates[dag.Validate].Spec.Templates[0].DAG.Tasks {
		p := taskParams(task)
		got[task.Name] = p["app-namespace"] + ":" + strings.ReplaceAll(p["apps"], "\n", ",")
	}
	wantV := map[string]string{"s1": ":a", "s1-in-team-a": "team-a:b,c", "s2": ":e", "s2-in-team-b": "team-b:d"}
	if len(got) != len(wantV) {
		t.Errorf("validate tasks %v, want %v", got, wantV)
	}
	for k, v := range wantV {
		if got[k] != v {
			t.Errorf("validate task %s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// The CWTs read the task's app-namespace, defaulting to the workflow's
// argocd-namespace, for every step.
func TestTemplatesTakeAppNamespace(t *testing.T) {
	cwts, err := ClusterWorkflowTemplates(spec.Workflow{Image: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cwts {
		tmpl := c.Spec.Templates[0]
		env, input := false, false
		for _, e := range tmpl.Container.Env {
			env = env || (e.Name == "ARGOCD_APP_NAMESPACE" && e.Value == "{{inputs.parameters.app-namespace}}")
		}
		for _, p := range tmpl.Inputs.Parameters {
			input = input || (p.Name == "app-namespace" && p.Default != nil && p.Default.String() == "{{workflow.parameters.argocd-namespace}}")
		}
		if !env || !input {
			t.Errorf("%s: ARGOCD_APP_NAMESPACE is not the input app-namespace defaulting to argocd-namespace", c.Name)
		}
	}
}

func TestValidateTaskNameClash(t *testing.T) {
	src := strings.Replace(nsSpec, "  - name: s2\n", "  - name: s1-in-team-a\n", 1)
	if _, err := compileSrc(t, src); err == nil || !strings.Contains(err.Error(), "rename the stack") {
		t.Fatalf("want a clash of validate task names, got %v", err)
	}
}

// The policy, enforced by Argo CD's own RBAC code: apps in Argo CD's
// namespace by PROJECT/*, the others by PROJECT/NAMESPACE/APP only.
func TestPolicyAppsInAnyNamespace(t *testing.T) {
	enforce := func(policy string) func(action, object string) bool {
		e := argocdrbac.NewEnforcer(fake.NewClientset(), "argocd", "argocd-rbac-cm", nil)
		if err := e.SetUserPolicy(policy); err != nil {
			t.Fatalf("Argo CD refuses the policy: %v\n%s", err, policy)
		}
		return func(action, object string) bool { return e.Enforce(ArgoCDAccount, "applications", action, object) }
	}
	onlyOthers := strings.NewReplacer("    - {name: a, source: {path: a}}\n", "", ", dependsOn: [a]", "",
		"    - {name: e, applicationNamespace: argocd, source: {path: e}}\n", "").Replace(nsSpec)
	policy := policyOf(t, mustCompile(t, onlyOthers))
	if strings.Contains(policy, "/*, allow") {
		t.Errorf("no app in Argo CD's namespace, yet a PROJECT/* line:\n%s", policy)
	}
	allowed := enforce(policy)
	for _, c := range []struct {
		action, object string
		want           bool
	}{
		{"sync", "default/team-a/b", true},
		{"create", "team/team-a/c", true},
		{"delete", "default/team-b/d", true},
		{"delete/*/PersistentVolumeClaim/team-b/data", "default/team-b/d", true},
		{"delete/apiextensions.k8s.io/CustomResourceDefinition//x", "team/team-a/c", true},
		{"sync", "default/team-b/b", false}, // b, but in another namespace
		{"sync", "default/team-a/x", false}, // another app of the namespace
		{"sync", "team/team-a/b", false},    // b, in another project
		{"sync", "default/b", false},        // b in Argo CD's namespace
		{"delete/apps/Deployment/team-a/b", "default/team-a/b", false},
		{"override", "default/team-a/b", false},
	} {
		if got := allowed(c.action, c.object); got != c.want {
			t.Errorf("%s %s: allowed %v, want %v\n%s", c.action, c.object, got, c.want, policy)
		}
	}
	mixed := enforce(policyOf(t, mustCompile(t, nsSpec)))
	if !mixed("sync", "default/a") || !mixed("sync", "team/team-a/c") || mixed("sync", "other/a") {
		t.Errorf("mixed platform: want default/* and team/team-a/c only")
	}
}

func policyOf(t *testing.T, out *Output) string {
	t.Helper()
	for _, o := range out.RBAC {
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == "argocd-rbac-cm" {
			for _, v := range cm.Data {
				return v
			}
		}
	}
	t.Fatal("no argocd-rbac-cm")
	return ""
}
