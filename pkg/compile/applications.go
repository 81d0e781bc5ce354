package compile

import (
	"encoding/json"
	"fmt"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/spec"
)

// Application is Argo CD's own type: what the step creates and what the
// root Application later adopts from Git must be the same object.
type Application = appv1.Application

// resourcesFinalizer makes deleting an Application delete its resources.
const resourcesFinalizer = "resources-finalizer.argocd.argoproj.io"

// RootApplicationName is the GitOps handoff Application of a platform; the
// reserved prefix keeps it apart from every app name.
func RootApplicationName(platform string) string { return spec.ReservedPrefix + "root-" + platform }

// application builds the Argo CD Application of one app. It carries no
// automated sync unless the spec asks for it: the deploy workflow syncs each
// app itself when its turn comes (INV-2, docs/requirements.md#inv-2-single-deployment-path).
func application(p *spec.Platform, stack string, a *spec.App) (*Application, error) {
	labels := map[string]string{
		LabelPlatform:  p.Metadata.Name,
		LabelStack:     stack,
		LabelManagedBy: ManagedBy,
	}
	for k, v := range a.Labels {
		labels[k] = v
	}
	app := &Application{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        a.Name,
			Namespace:   AppNamespace(p, a),
			Labels:      labels,
			Annotations: a.Annotations,
			Finalizers:  []string{resourcesFinalizer},
		},
		Spec: appv1.ApplicationSpec{
			Project: a.Project,
			Destination: appv1.ApplicationDestination{
				Server:    a.Destination.Server,
				Name:      a.Destination.Name,
				Namespace: a.Destination.Namespace,
			},
			SyncPolicy: syncPolicy(a.SyncPolicy, a.SyncOptions),
		},
	}
	if len(a.Sources) > 0 {
		for i := range a.Sources {
			s, err := source(&a.Sources[i])
			if err != nil {
				return nil, err
			}
			app.Spec.Sources = append(app.Spec.Sources, *s)
		}
	} else {
		s, err := source(a.Source)
		if err != nil {
			return nil, err
		}
		app.Spec.Source = s
	}
	app.Spec.RevisionHistoryLimit = a.RevisionHistoryLimit
	for _, i := range a.Info {
		app.Spec.Info = append(app.Spec.Info, appv1.Info{Name: i.Name, Value: i.Value})
	}
	for _, d := range a.IgnoreDifferences {
		app.Spec.IgnoreDifferences = append(app.Spec.IgnoreDifferences, appv1.ResourceIgnoreDifferences{
			Group: d.Group, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace,
			JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions, ManagedFieldsManagers: d.ManagedFieldsManagers,
		})
	}
	return app, nil
}

func syncPolicy(sp *spec.SyncPolicy, opts []string) *appv1.SyncPolicy {
	out := &appv1.SyncPolicy{SyncOptions: opts}
	if sp != nil {
		if at := sp.Automated; at != nil {
			out.Automated = &appv1.SyncPolicyAutomated{Prune: at.Prune, SelfHeal: at.SelfHeal, AllowEmpty: at.AllowEmpty}
		}
		if r := sp.Retry; r != nil {
			out.Retry = &appv1.RetryStrategy{Limit: r.Limit}
			if b := r.Backoff; b != nil {
				out.Retry.Backoff = &appv1.Backoff{Duration: b.Duration, Factor: b.Factor, MaxDuration: b.MaxDuration}
			}
		}
		if m := sp.ManagedNamespaceMetadata; m != nil {
			out.ManagedNamespaceMetadata = &appv1.ManagedNamespaceMetadata{Labels: m.Labels, Annotations: m.Annotations}
		}
	}
	if out.IsZero() {
		return nil
	}
	return out
}

// source converts one source. The spec's source fields are Argo CD's, by
// name and shape (pkg/spec), so they convert by their JSON: every field the
// spec has reaches the Application, none by a hand-written copy that could
// forget one.
func source(s *spec.Source) (*appv1.ApplicationSource, error) {
	out := &appv1.ApplicationSource{}
	if err := viaJSON(s, out); err != nil {
		return nil, fmt.Errorf("source %s: %w", s.RepoURL, err)
	}
	return out, nil
}

// viaJSON converts between types with the same JSON fields.
func viaJSON(in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// rootApplication is the GitOps handoff: an app-of-apps over the generated
// applications/ folder, created by the deploy's last node once every app is
// Healthy, so steady state (Phase 3) belongs to Argo CD.
func rootApplication(p *spec.Platform) *Application {
	b := p.Spec.Bootstrap
	if b == nil || b.RootApplication == nil {
		return nil
	}
	r := b.RootApplication
	src := appv1.ApplicationSource{RepoURL: r.RepoURL, TargetRevision: r.TargetRevision, Path: r.Path}
	if def := p.Spec.Defaults.Source; def != nil {
		if src.RepoURL == "" {
			src.RepoURL = def.RepoURL
		}
		if src.TargetRevision == "" {
			src.TargetRevision = def.TargetRevision
		}
	}
	app := &Application{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      RootApplicationName(p.Metadata.Name),
			Namespace: p.Spec.ArgoCD.Namespace,
			Labels:    map[string]string{LabelPlatform: p.Metadata.Name, LabelManagedBy: ManagedBy},
			// No resources finalizer: deleting the root must orphan the
			// child Applications, which teardown then deletes in order.
		},
		Spec: appv1.ApplicationSpec{
			Project:     p.Spec.ArgoCD.Project,
			Source:      &src,
			Destination: appv1.ApplicationDestination{Server: spec.DefaultServer, Namespace: p.Spec.ArgoCD.Namespace},
		},
	}
	if r.Automated {
		// selfHeal corrects drift; no prune, so removing an app from Git
		// never deletes it out of dependency order.
		app.Spec.SyncPolicy = &appv1.SyncPolicy{Automated: &appv1.SyncPolicyAutomated{SelfHeal: true}}
	}
	return app
}
