package compile

import (
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/spec"
)

// AppNamespace is the namespace of an app's Application object: its
// applicationNamespace (Argo CD's apps in any namespace), else Argo CD's.
func AppNamespace(p *spec.Platform, a *spec.App) string {
	if a.ApplicationNamespace != "" {
		return a.ApplicationNamespace
	}
	return p.Spec.ArgoCD.Namespace
}

// otherNamespace: the app's Application lives outside Argo CD's namespace.
func otherNamespace(p *spec.Platform, a *spec.App) bool {
	return a.ApplicationNamespace != "" && a.ApplicationNamespace != p.Spec.ArgoCD.Namespace
}

// appNamespaceArg is the CWTs' app-namespace argument for an app with its
// own Application namespace; without it the CWTs use the workflow's
// argocd-namespace (so templates of other platforms stay as they were).
func appNamespaceArg(a *spec.App) []wfv1.Parameter {
	if a.ApplicationNamespace == "" {
		return nil
	}
	return []wfv1.Parameter{param("app-namespace", a.ApplicationNamespace)}
}
