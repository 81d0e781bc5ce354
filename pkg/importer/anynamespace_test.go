package importer

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/deployctl/deployctl/pkg/compile"
)

// Applications outside Argo CD's namespace (apps in any namespace) keep
// their namespace: applicationNamespace in the spec, the same
// metadata.namespace in the generated Application, no difference, and the
// generated Argo CD policy names them PROJECT/NAMESPACE/APP.
func TestAppsInAnyNamespace(t *testing.T) {
	r := importDir(t, "parent", "testdata/any-namespace")
	d := writeAndLoad(t, r)
	if len(r.Differences) > 0 {
		t.Errorf("differences: %v", r.Differences)
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "namespace") && !strings.Contains(n, "tracking-id") {
			t.Errorf("note about namespaces: %s", n)
		}
	}
	want := map[string]string{"base": "", "web": "team-a", "api": "team-b"}
	for _, s := range r.Platform.Spec.Stacks {
		for _, a := range s.Apps {
			if a.ApplicationNamespace != want[a.Name] {
				t.Errorf("%s: applicationNamespace %q, want %q", a.Name, a.ApplicationNamespace, want[a.Name])
			}
		}
	}
	out, err := compile.Compile(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	typed := typedApps(t, "testdata/any-namespace")
	for _, a := range out.Applications {
		orig := typed[a.Name].Namespace
		if a.Namespace != orig {
			t.Errorf("%s: generated in %q, original in %q", a.Name, a.Namespace, orig)
		}
	}
	var policy string
	for _, o := range out.RBAC {
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == "argocd-rbac-cm" {
			policy = cm.Data["policy.deployctl-reference-platform.csv"]
		}
	}
	for _, line := range []string{
		"p, role:deployctl-reference-platform, applications, sync, default/*, allow",
		"p, role:deployctl-reference-platform, applications, sync, teams/team-a/web, allow",
		"p, role:deployctl-reference-platform, applications, sync, teams/team-b/api, allow",
	} {
		if !strings.Contains(policy, line) {
			t.Errorf("policy lacks %q:\n%s", line, policy)
		}
	}
	if strings.Contains(policy, "teams/*") {
		t.Errorf("project teams has no Application in Argo CD's namespace, yet teams/*:\n%s", policy)
	}
}
