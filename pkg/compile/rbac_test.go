package compile

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The Argo CD policy has, per object, the five Application verbs and the two
// fine-grained deletes, and nothing else: PROJECT/* for each project with
// Applications in Argo CD's namespace (data for db; platform for cache,
// worker and the root), PROJECT/NAMESPACE/APP for api alone (project team,
// namespace team-a), and no team/* line: api's project is not granted
// project-wide.
func TestArgoCDPolicyLines(t *testing.T) {
	out := shop(t)
	policy := argoCDPolicy(out.Deploy.Platform)
	var want []string
	for _, obj := range []string{"data/*", "platform/*", "team/team-a/api"} {
		for _, verb := range []string{"get", "create", "update", "sync", "delete", "delete/*/PersistentVolumeClaim/*/*", "delete/apiextensions.k8s.io/CustomResourceDefinition/*/*"} {
			want = append(want, fmt.Sprintf("p, role:deployctl-shop, applications, %s, %s, allow", verb, obj))
		}
	}
	want = append(want, "g, deployctl, role:deployctl-shop")
	if got := strings.Split(strings.TrimSuffix(policy, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("policy:\n%s\nwant:\n%s", policy, strings.Join(want, "\n"))
	}
}

// In Kubernetes the workflow pods may only record their outputs; the
// partial ConfigMaps carry the account, its policy and nothing of anyone
// else's.
func TestKubernetesRBAC(t *testing.T) {
	out := shop(t)
	var role *rbacv1.Role
	var binding *rbacv1.RoleBinding
	cms := map[string]*corev1.ConfigMap{}
	for _, o := range out.RBAC {
		switch o := o.(type) {
		case *rbacv1.Role:
			role = o
		case *rbacv1.RoleBinding:
			binding = o
		case *corev1.ConfigMap:
			cms[o.Name] = o
		case *corev1.ServiceAccount:
			if o.Name != "deployctl" || o.Namespace != "argo" {
				t.Errorf("ServiceAccount %s/%s, want argo/deployctl", o.Namespace, o.Name)
			}
		default:
			t.Errorf("unexpected RBAC object %T", o)
		}
	}
	if role == nil || binding == nil {
		t.Fatal("no Role or RoleBinding")
	}
	if len(role.Rules) != 1 || strings.Join(role.Rules[0].Resources, ",") != "workflowtaskresults" || strings.Join(role.Rules[0].Verbs, ",") != "create,patch" {
		t.Errorf("Role rules %+v, want only workflowtaskresults create, patch", role.Rules)
	}
	if s := binding.Subjects; len(s) != 1 || s[0].Name != "deployctl" || s[0].Namespace != "argo" || binding.RoleRef.Name != role.Name {
		t.Errorf("RoleBinding %+v binds something else than the workflow ServiceAccount to %s", binding, role.Name)
	}
	if got := cms["argocd-cm"].Data["accounts.deployctl"]; got != "apiKey" {
		t.Errorf("argocd-cm accounts.deployctl = %q, want apiKey", got)
	}
	rbacCM := cms["argocd-rbac-cm"]
	if len(rbacCM.Data) != 1 || rbacCM.Data["policy.deployctl-shop.csv"] != argoCDPolicy(out.Deploy.Platform) {
		t.Errorf("argocd-rbac-cm data %v, want only policy.deployctl-shop.csv", rbacCM.Data)
	}
}
