package compile

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/healthlua"
	"github.com/deployctl/deployctl/pkg/spec"
)

// ArgoCDAccount is the Argo CD local account whose API token the workflow
// pods use (a Secret mounted as a file).
const ArgoCDAccount = "deployctl"

// rbac returns what the workflow pods need, nothing more, and the Argo CD
// configuration the platform relies on.
//
// In Kubernetes the pods only run Argo's emissary executor, which records
// step outputs as WorkflowTaskResults (create, patch): the step itself never
// calls the Kubernetes API, it talks to Argo CD with a token. Plugin mode
// adds the agent's WorkflowTaskSet rules and the plugin's own objects
// (pluginRBAC). In Argo CD the
// token's account may get, create, update, sync and delete Applications of
// the platform's projects only.
//
// The argocd-cm partial also carries the platform's health customizations
// (INV-7, docs/requirements.md#inv-7-health-verification-accuracy): one server-side apply of rbac/ sets the account, its policy and
// the health scripts, so the documented manual path and the executor apply
// the same thing, and neither drops the other's keys.
func rbac(p *spec.Platform) ([]any, error) {
	cm, err := healthlua.ConfigMapData(p)
	if err != nil {
		return nil, err
	}
	cm["accounts."+ArgoCDAccount] = "apiKey"
	ns := p.Spec.Workflow.Namespace
	sa := p.Spec.Workflow.ServiceAccount
	name := "deployctl-" + p.Metadata.Name
	labels := map[string]string{LabelPlatform: p.Metadata.Name, LabelManagedBy: ManagedBy}
	meta := func(n, namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: n, Namespace: namespace, Labels: labels}
	}
	rules := []rbacv1.PolicyRule{{
		APIGroups: []string{"argoproj.io"},
		Resources: []string{"workflowtaskresults"},
		Verbs:     []string{"create", "patch"},
	}}
	var plugin []any
	if p.Spec.Workflow.StepMode.Plugin() {
		rules = append(rules, agentRules...)
		if plugin, err = pluginRBAC(p, meta); err != nil {
			return nil, err
		}
	}
	objs := []any{
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(sa, ns),
		},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta(name, ns),
			Rules:      rules,
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta(name, ns),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
		},
		// Partial ConfigMaps, applied with server-side apply so they merge
		// into Argo CD's own: the keys deployctl owns, per platform.
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: p.Spec.ArgoCD.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
			Data:       cm,
		},
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: p.Spec.ArgoCD.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
			Data:       map[string]string{"policy." + ArgoCDAccount + "-" + p.Metadata.Name + ".csv": argoCDPolicy(p)},
		},
	}
	return append(objs, plugin...), nil
}

// argoCDPolicy grants the account exactly the Application verbs the step
// uses, and deletion of the two resource kinds teardown deletes itself, on
// the platform's projects. An app whose Application lives in another
// namespace (applicationNamespace) gets its own lines with Argo CD's object
// for apps in any namespace, PROJECT/NAMESPACE/APP; PROJECT/* lines only
// for the projects of Applications in Argo CD's namespace (apps, the root).
func argoCDPolicy(p *spec.Platform) string {
	projects := map[string]bool{}
	var others []string // PROJECT/NAMESPACE/APP
	for _, s := range p.Spec.Stacks {
		for i := range s.Apps {
			a := &s.Apps[i]
			if otherNamespace(p, a) {
				others = append(others, a.Project+"/"+a.ApplicationNamespace+"/"+a.Name)
			} else {
				projects[a.Project] = true
			}
		}
	}
	if b := p.Spec.Bootstrap; b != nil && b.RootApplication != nil {
		projects[p.Spec.ArgoCD.Project] = true // the root's
	}
	objects := make([]string, 0, len(projects)+len(others))
	for _, pr := range slices.Sorted(maps.Keys(projects)) {
		objects = append(objects, pr+"/*")
	}
	sort.Strings(others)
	objects = append(objects, others...)
	role := "role:deployctl-" + p.Metadata.Name
	var b strings.Builder
	for _, obj := range objects {
		for _, verb := range []string{"get", "create", "update", "sync", "delete"} {
			fmt.Fprintf(&b, "p, %s, applications, %s, %s, allow\n", role, verb, obj)
		}
		// Teardown deletes two kinds through the resource API, under
		// pv-policy / crd-policy delete. Argo CD 3 no longer lets
		// "delete" on an Application cover its resources
		// (server.rbac.disableApplicationFineGrainedRBACInheritance);
		// the action is delete/GROUP/KIND/NAMESPACE/NAME.
		for _, gk := range []string{"*/PersistentVolumeClaim", "apiextensions.k8s.io/CustomResourceDefinition"} {
			fmt.Fprintf(&b, "p, %s, applications, delete/%s/*/*, %s, allow\n", role, gk, obj)
		}
	}
	fmt.Fprintf(&b, "g, %s, %s\n", ArgoCDAccount, role)
	return b.String()
}
