package generate

import (
	"testing"

	"github.com/argoproj/argo-cd/v2/util/rbac"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// TestArgoCDPolicyIsLeastPrivilege loads the generated argocd-rbac-cm policy
// into Argo CD's own RBAC enforcer (casbin with Argo CD's model and glob
// matching) and checks what the step's account may and may not do. The
// resource-delete actions are spelled as Argo CD 3 checks them once
// fine-grained inheritance is off: delete/GROUP/KIND/NAMESPACE/NAME.
func TestArgoCDPolicyIsLeastPrivilege(t *testing.T) {
	tree := generateFile(t, "../../examples/minimal.yaml", "platform")
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(tree["rbac/argocd-rbac-cm.yaml"], &cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 1 {
		t.Fatalf("want one policy key, got %v", cm.Data)
	}
	e := rbac.NewEnforcer(fake.NewClientset(), "argocd", "argocd-rbac-cm", nil)
	for _, policy := range cm.Data {
		if err := e.SetUserPolicy(policy); err != nil {
			t.Fatal(err)
		}
	}
	const app = "default/cert-manager"
	for _, c := range []struct {
		resource, action, object string
		want                     bool
	}{
		{"applications", "get", app, true},
		{"applications", "create", app, true},
		{"applications", "update", app, true},
		{"applications", "sync", app, true},
		{"applications", "delete", app, true},
		{"applications", "delete//PersistentVolumeClaim/data/data-db-0", app, true},
		{"applications", "delete/apiextensions.k8s.io/CustomResourceDefinition//certificates.cert-manager.io", app, true},
		{"applications", "delete/apps/Deployment/cert-manager/cert-manager", app, false},
		{"applications", "delete//Secret/cert-manager/ca", app, false},
		{"applications", "update/apps/Deployment/cert-manager/cert-manager", app, false},
		{"applications", "action/apps/Deployment/restart", app, false},
		{"applications", "get", "other-project/cert-manager", false},
		{"clusters", "get", "*", false},
		{"repositories", "get", "*", false},
		{"projects", "get", "default", false},
		{"accounts", "update", "*", false},
	} {
		if got := e.Enforce("deployctl", c.resource, c.action, c.object); got != c.want {
			t.Errorf("deployctl %s %s %s: allowed %v, want %v", c.resource, c.action, c.object, got, c.want)
		}
	}
}
