package executor

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/executor/internal/apply"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/manifest"
)

// FieldManager owns the fields deployctl applies (but see
// PlatformFieldManager).
const FieldManager = "deployctl"

// PlatformFieldManager owns a platform's keys of the ConfigMaps Argo CD
// shares between platforms (argocd-cm, argocd-rbac-cm). A field manager owns
// exactly what it last applied: with one manager for every platform, the
// apply of one platform would remove the RBAC policy key and the health
// customizations of the others. It owns the rest of generated rbac/ too
// (ServiceAccount, Role, RoleBinding), so that one
// `kubectl apply --server-side --field-manager=deployctl-<platform> -k rbac/`
// by hand and the executor's apply are the same apply: neither rewrites what
// the other wrote.
func PlatformFieldManager(platform string) string { return FieldManager + "-" + platform }

// resources maps the kinds the executor applies to their resources.
var resources = map[string]schema.GroupVersionResource{
	"ServiceAccount":          {Version: "v1", Resource: "serviceaccounts"},
	"ConfigMap":               {Version: "v1", Resource: "configmaps"},
	"Secret":                  kube.GVRSecret,
	"Role":                    {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":             {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"ClusterWorkflowTemplate": kube.GVRClusterWorkflowTemplate,
	"WorkflowTemplate":        kube.GVRWorkflowTemplate,
}

// objectsToApply is everything deploy and teardown ensure before they run
// a workflow, in apply order: the workflow pods' RBAC, the Argo CD
// configuration partials (account, RBAC policy and the health
// customizations, docs/requirements.md#inv-7-health-verification-accuracy), the credentials found in the secrets directory,
// the ClusterWorkflowTemplates, then the ConfigMaps of the deploy's
// Applications and the platform's WorkflowTemplates (all three actions, so
// validate and teardown always match the deploy).
func objectsToApply(c *Config, out *compile.Output) ([]apply.Object, error) {
	p := c.DAG.Platform
	// The compiled argocd-cm partial already holds the account and the
	// health customizations (pkg/compile/rbac.go): one apply owns them all.
	var typed []any
	typed = append(typed, out.RBAC...)
	labels := map[string]string{compile.LabelPlatform: out.Platform, compile.LabelManagedBy: compile.ManagedBy}
	secret := func(name, key string, data []byte) *corev1.Secret {
		return &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Spec.Workflow.Namespace, Labels: labels},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{key: []byte(strings.TrimSpace(string(data)))},
		}
	}
	if tok, ok := c.secrets[SecretArgoCDToken]; ok {
		typed = append(typed, secret(p.Spec.ArgoCD.TokenSecret.Name, p.Spec.ArgoCD.TokenSecret.Key, tok))
	}
	if ca, ok := c.secrets[SecretArgoCDCA]; ok && p.Spec.ArgoCD.CASecret != nil {
		typed = append(typed, secret(p.Spec.ArgoCD.CASecret.Name, p.Spec.ArgoCD.CASecret.Key, ca))
	}
	if hook, ok := c.secrets[SecretWebhookToken]; ok {
		ref := p.Spec.Events.WebhookAuthSecret()
		typed = append(typed, secret(ref.Name, ref.Key, hook))
	}
	for _, cwt := range out.ClusterTemplates {
		typed = append(typed, cwt)
	}
	for _, c := range out.ApplicationConfigMaps { // what the deploy's tasks read
		typed = append(typed, c)
	}
	for _, a := range compile.Actions {
		typed = append(typed, out.WorkflowTemplates[a])
	}
	objs := make([]apply.Object, 0, len(typed))
	for _, t := range typed {
		m, err := manifest.Clean(t)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		gvr, ok := resources[u.GetKind()]
		if !ok {
			return nil, fmt.Errorf("internal: no resource known for kind %s", u.GetKind())
		}
		mgr := FieldManager
		switch u.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding": // the rest of rbac/: one manager per folder, as the README applies it
			mgr = PlatformFieldManager(out.Platform)
		case "ConfigMap":
			if u.GetNamespace() == p.Spec.ArgoCD.Namespace || u.GetName() == compile.PluginConfigMap {
				mgr = PlatformFieldManager(out.Platform)
			}
		case "Secret": // plugin mode's token Secrets are rbac/'s; the credentials are not
			if t, _, _ := unstructured.NestedString(u.Object, "type"); t == string(corev1.SecretTypeServiceAccountToken) {
				mgr = PlatformFieldManager(out.Platform)
			}
		}
		objs = append(objs, apply.Object{GVR: gvr, U: u, Manager: mgr})
	}
	return objs, nil
}
