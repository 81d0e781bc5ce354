package compile

import "github.com/deployctl/deployctl/pkg/spec"

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

// appNamespaceArg is the steps' app-namespace for an app with its own
// Application namespace, "" without: the templates then use the
// workflow's argocd-namespace (so templates of other platforms stay as
// they were).
func appNamespaceArg(a *spec.App) string { return a.ApplicationNamespace }
