package compile

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/spec"
)

// Application is Argo CD's own type: what the step creates and what the
// root Application later adopts from Git must be the same object. The
// linked type is argo-cd v2.14's (README "Support matrix"); the Argo CD 3
// fields it has no place for (a source's tagPrefix, kustomize's
// ignoreMissingComponents and labelIncludeTemplates, directory's
// disableExtensionFilter, syncPolicy.automated.enabled and
// syncPolicy.retry.refresh) are kept beside it, at their JSON paths, and
// written into its JSON: every output (the step's manifest, applications/,
// the import's round trip) is its JSON.
type Application struct {
	appv1.Application
	v3 []v3Field
}

// v3Field is one Argo CD 3 field: its path of keys (string) and list
// indexes (int) in the Application's JSON, and its value.
type v3Field struct {
	path  []any
	value any
}

// MarshalJSON is the Application's JSON with its Argo CD 3 fields.
func (a Application) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(&a.Application)
	if err != nil || len(a.v3) == 0 {
		return raw, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	for _, f := range a.v3 {
		if err := setPath(obj, f.path, f.value); err != nil {
			return nil, err
		}
	}
	return json.Marshal(obj)
}

// setPath writes v at path in obj, making the objects on the way.
func setPath(obj map[string]any, path []any, v any) error {
	var cur any = obj
	for i, k := range path {
		last := i == len(path)-1
		switch key := k.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return fmt.Errorf("internal: %v: no object at %q", path, key)
			}
			if last {
				m[key] = v
				return nil
			}
			if _, ok := m[key]; !ok {
				m[key] = map[string]any{}
			}
			cur = m[key]
		case int:
			l, ok := cur.([]any)
			if !ok || key >= len(l) || last {
				return fmt.Errorf("internal: %v: no list item %d", path, key)
			}
			cur = l[key]
		}
	}
	return nil
}

// V3Fields lists the Argo CD 3 fields of the Application (their JSON
// paths, dotted), for the checks that the Argo CD it goes to knows them.
func (a *Application) V3Fields() []string {
	var out []string
	for _, f := range a.v3 {
		var b strings.Builder
		for _, k := range f.path {
			switch key := k.(type) {
			case string:
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(key)
			case int:
				fmt.Fprintf(&b, "[%d]", key)
			}
		}
		out = append(out, b.String())
	}
	return out
}

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
	app := &Application{Application: appv1.Application{
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
	}}
	if len(a.Sources) > 0 {
		for i := range a.Sources {
			s, v3, err := source(&a.Sources[i], []any{"spec", "sources", i})
			if err != nil {
				return nil, err
			}
			app.Spec.Sources = append(app.Spec.Sources, *s)
			app.v3 = append(app.v3, v3...)
		}
	} else {
		s, v3, err := source(a.Source, []any{"spec", "source"})
		if err != nil {
			return nil, err
		}
		app.Spec.Source = s
		app.v3 = append(app.v3, v3...)
	}
	app.v3 = append(app.v3, syncPolicyV3(a.SyncPolicy)...)
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
	if out.IsZero() && !v3Policy(sp) {
		return nil
	}
	return out
}

// v3Policy: the sync policy has an Argo CD 3 field (the Application must
// then have a syncPolicy for it, even if empty in v2's terms).
func v3Policy(sp *spec.SyncPolicy) bool {
	return len(syncPolicyV3(sp)) > 0
}

// syncPolicyV3 is the sync policy's Argo CD 3 fields: automated.enabled
// (Argo CD 3.1: false turns automated sync off and keeps its options, as
// Argo CD reads it) and retry.refresh (Argo CD 3.2).
func syncPolicyV3(sp *spec.SyncPolicy) []v3Field {
	if sp == nil {
		return nil
	}
	var out []v3Field
	if at := sp.Automated; at != nil && at.Enabled != nil {
		out = append(out, v3Field{[]any{"spec", "syncPolicy", "automated", "enabled"}, *at.Enabled})
	}
	if r := sp.Retry; r != nil && r.Refresh {
		out = append(out, v3Field{[]any{"spec", "syncPolicy", "retry", "refresh"}, true})
	}
	return out
}

// source converts one source. The spec's source fields are Argo CD's, by
// name and shape (pkg/spec), so they convert by their JSON: every field the
// spec has reaches the Application, none by a hand-written copy that could
// forget one. What v2's type has no place for (Argo CD 3's fields) is
// returned as v3 fields under at, found the same way: the spec's JSON
// against the converted source's.
func source(s *spec.Source, at []any) (*appv1.ApplicationSource, []v3Field, error) {
	out := &appv1.ApplicationSource{}
	if err := viaJSON(s, out); err != nil {
		return nil, nil, fmt.Errorf("source %s: %w", s.RepoURL, err)
	}
	var want, got map[string]any
	if err := viaJSON(s, &want); err != nil {
		return nil, nil, err
	}
	if err := viaJSON(out, &got); err != nil {
		return nil, nil, err
	}
	var v3 []v3Field
	missing(at, want, got, &v3)
	return out, v3, nil
}

// missing adds to out every value of want that got lacks, at its path.
func missing(at []any, want, got any, out *[]v3Field) {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append([]any(nil), at...), k)
			gv, ok := g[k]
			if !ok {
				*out = append(*out, v3Field{p, w[k]})
				continue
			}
			missing(p, w[k], gv, out)
		}
	case []any:
		g, _ := got.([]any)
		for i := range w {
			if i < len(g) {
				missing(append(append([]any(nil), at...), i), w[i], g[i], out)
			}
		}
	}
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
	app := &Application{Application: appv1.Application{
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
	}}
	if r.Automated {
		// selfHeal corrects drift; no prune, so removing an app from Git
		// never deletes it out of dependency order.
		app.Spec.SyncPolicy = &appv1.SyncPolicy{Automated: &appv1.SyncPolicyAutomated{SelfHeal: true}}
	}
	return app
}
