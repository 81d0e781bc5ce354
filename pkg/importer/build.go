package importer

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/importer/appdiff"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/importer/argorules"
	"github.com/deployctl/deployctl/pkg/importer/argorules/syncwave"
	"github.com/deployctl/deployctl/pkg/importer/internal/words"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Metadata the import leaves out. Labels deployctl sets itself would be
// overwritten or would overwrite its own; the parent's tracking and Helm's
// release ownership belong to the app-of-apps deployctl replaces; the sync
// wave moves to syncwave.Annotation (deployctl orders by dependsOn, and
// the root Application must not order its children by wave again).
var (
	droppedLabels = []string{argorules.Instance, compile.LabelPlatform, compile.LabelStack, compile.LabelManagedBy}
	// droppedAnnotations: exact keys, or prefixes ending in "/".
	droppedAnnotations = []string{argorules.TrackingIDKey, syncwave.ArgoCDAnnotation, "argocd.argoproj.io/refresh",
		"argocd.argoproj.io/hydrate", "kubectl.kubernetes.io/last-applied-configuration", "meta.helm.sh/"}
)

// platform builds the spec: settings, defaults factored out of the apps,
// and every app in its stack.
func (b *builder) platform() error {
	o := b.o
	ns := b.argocdNamespace()
	var projects []string
	for _, a := range b.apps {
		projects = append(projects, a.m.App.Spec.Project)
	}
	project, _ := mostCommon(projects)
	if project == "" {
		project = spec.DefaultProject
	}
	server := o.ArgoCDServer
	if server == "" {
		server = "argocd-server." + ns + ".svc:443"
	}
	p := &spec.Platform{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: o.Name}}
	p.Spec.ArgoCD = spec.ArgoCD{Namespace: ns, Server: server, Project: project}
	p.Spec.Workflow = spec.Workflow{
		Namespace:      or(o.WorkflowNamespace, DefaultWorkflowNamespace),
		ServiceAccount: or(o.ServiceAccount, DefaultServiceAccount),
		Image:          or(o.Image, DefaultImage),
	}
	if p.Spec.Workflow.Image == DefaultImage {
		b.note("spec.workflow.image is a placeholder (%s): set it to your deploystep image (--image)", DefaultImage)
	}
	b.defaults(&p.Spec.Defaults)

	var problems []string
	stacks := map[string]*spec.Stack{}
	var order []string
	b.dropped = map[string][]string{}
	noFinalizer := 0
	for _, a := range b.apps {
		sa, err := b.app(a, p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s (%s): %v", a.key, a.m.File, err))
			continue
		}
		s := stacks[a.stack]
		if s == nil {
			s = &spec.Stack{Name: a.stack}
			stacks[a.stack] = s
			order = append(order, a.stack)
		}
		s.Apps = append(s.Apps, sa)
		b.res.Sources[a.name] = a.m
		if a.self {
			b.res.Sources[a.name] = ownManifest(a.m, b.own[a])
		}
		if a.parentBy == argorules.AppInstance {
			b.res.Sources[a.name] = withoutLabel(b.res.Sources[a.name], argorules.AppInstance)
		}
		if !hasResourcesFinalizer(a.m.App) {
			noFinalizer++
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%d Applications cannot be expressed in a spec; fix them and import again:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	for _, s := range order {
		p.Spec.Stacks = append(p.Spec.Stacks, *stacks[s])
	}
	keys := make([]string, 0, len(b.dropped))
	for k := range b.dropped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sort.Strings(b.dropped[k])
		b.note("%s left out of %s: %s", k, words.Plural(len(b.dropped[k]), "app"), words.Summarize(b.dropped[k], 6))
	}
	if n := len(b.ignoredSource); n > 0 {
		sort.Strings(b.ignoredSource)
		b.note("%s set spec.source beside spec.sources: Argo CD ignores source when sources is set, so it is dropped as Argo CD drops it: %s",
			words.Plural(n, "app"), words.Summarize(b.ignoredSource, 6))
	}
	if noFinalizer > 0 {
		b.note("%s had no resources finalizer: deployctl's Applications have it, so teardown deletes their resources (cascade)", words.Plural(noFinalizer, "app"))
	}
	b.res.Platform = p
	return nil
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func hasResourcesFinalizer(a *appv1.Application) bool {
	for _, f := range a.Finalizers {
		if strings.HasPrefix(f, "resources-finalizer.argocd.argoproj.io") {
			return true
		}
	}
	return false
}

// defaults factors out what most apps share, so the spec reads like a
// hand-written one: the source repoURL and targetRevision, the sync options
// and the sync policy. spec.defaults applies field by field (pkg/spec
// normalize), so a value is factored only where every app gets back
// exactly what it had: an app that differs says so itself.
func (b *builder) defaults(d *spec.Defaults) {
	var repos, revs []string
	emptyRev := false
	for _, a := range b.apps {
		srcs := sourcesOf(a.m.App)
		if a.self {
			srcs = b.own[a].sources
		}
		for _, s := range srcs {
			repos = append(repos, s.RepoURL)
			revs = append(revs, s.TargetRevision)
			emptyRev = emptyRev || s.TargetRevision == ""
		}
	}
	src := &spec.Source{}
	if r, n := mostCommon(repos); n >= 2 {
		src.RepoURL = r
	}
	// A source without targetRevision would inherit the default one.
	if r, n := mostCommon(revs); n >= 2 && !emptyRev {
		src.TargetRevision = r
	}
	if src.RepoURL != "" || src.TargetRevision != "" {
		d.Source = src
	}
	b.emptySyncOptions = map[string]bool{}

	// Sync options and policy: factored when a majority shares them; an app
	// without then says `syncOptions: []` or `syncPolicy: {}`.
	var opts, pols []string
	for _, a := range b.apps {
		opts = append(opts, keyOf(syncOptions(a.m.App)))
		pols = append(pols, keyOf(syncPolicyOf(a.m)))
	}
	if k, n := mostCommon(opts); 2*n >= len(b.apps) && n >= 2 && k != "null" {
		_ = json.Unmarshal([]byte(k), &d.SyncOptions)
	}
	if k, n := mostCommon(pols); 2*n >= len(b.apps) && n >= 2 && k != "null" {
		_ = json.Unmarshal([]byte(k), &d.SyncPolicy)
	}
}

func sourcesOf(a *appv1.Application) []appv1.ApplicationSource {
	if len(a.Spec.Sources) > 0 {
		return a.Spec.Sources
	}
	if a.Spec.Source != nil {
		return []appv1.ApplicationSource{*a.Spec.Source}
	}
	return nil
}

func syncOptions(a *appv1.Application) []string {
	if a.Spec.SyncPolicy == nil || len(a.Spec.SyncPolicy.SyncOptions) == 0 {
		return nil
	}
	return a.Spec.SyncPolicy.SyncOptions
}

// app converts one Application. Whatever it cannot express is found by the
// round trip (check), not here: here only what would make the spec invalid.
func (b *builder) app(a *app, p *spec.Platform) (spec.App, error) {
	src, d := a.m.App, p.Spec.Defaults
	out := spec.App{Name: a.name}
	// Argo CD's apps in any namespace: the Application stays where it is.
	if ns := src.Namespace; ns != "" && ns != p.Spec.ArgoCD.Namespace {
		out.ApplicationNamespace = ns
	}
	if src.Spec.Project != p.Spec.ArgoCD.Project {
		out.Project = src.Spec.Project
	}
	sources, multi := sourcesOf(src), len(src.Spec.Sources) > 0
	if a.self {
		sources, multi = b.own[a].sources, b.own[a].multi
	}
	if len(sources) == 0 {
		return out, fmt.Errorf("no source (spec.source or spec.sources): nothing to deploy")
	}
	for i, s := range sources {
		orig := i
		if a.self {
			orig = b.own[a].orig[i]
		}
		ss, err := source(s, a.m.V3.Source(orig), d.Source, multi)
		if err != nil {
			if multi {
				err = fmt.Errorf("sources[%d]: %w", i, err)
			}
			return out, err
		}
		if multi {
			out.Sources = append(out.Sources, ss)
		} else {
			out.Source = &ss
		}
	}
	dst := spec.Destination{Server: src.Spec.Destination.Server, Name: src.Spec.Destination.Name, Namespace: src.Spec.Destination.Namespace}
	if dst.Server == "" && dst.Name == "" {
		// The spec would give it the in-cluster server: another app than
		// the one Argo CD refuses to create (util/argo
		// GetDestinationServer) and its controller does not deploy.
		return out, fmt.Errorf("spec.destination has no server or name: Argo CD refuses it (\"Destination server missing from app spec\"): set one")
	}
	if dst.Server == spec.DefaultServer && dst.Name == "" {
		dst.Server = "" // the built-in default
	}
	if dst != (spec.Destination{}) {
		out.Destination = &dst
	}
	opts := syncOptions(src)
	switch {
	case keyOf(opts) == keyOf(d.SyncOptions):
	case len(opts) == 0:
		b.emptySyncOptions[a.name] = true
	default:
		out.SyncOptions = opts
	}
	if sp := syncPolicyOf(a.m); keyOf(sp) != keyOf(d.SyncPolicy) {
		if sp == nil {
			sp = &spec.SyncPolicy{} // `syncPolicy: {}`: not the default's
		}
		out.SyncPolicy = sp
	}
	out.Info = infoOf(src)
	if l := src.Spec.RevisionHistoryLimit; l != nil && *l != appdiff.DefaultRevisionHistoryLimit {
		out.RevisionHistoryLimit = l
	}
	if multi && src.Spec.Source != nil && !a.self {
		b.ignoredSource = append(b.ignoredSource, a.name)
	}
	for _, id := range src.Spec.IgnoreDifferences {
		out.IgnoreDifferences = append(out.IgnoreDifferences, spec.IgnoreDifference{
			Group: id.Group, Kind: id.Kind, Name: id.Name, Namespace: id.Namespace,
			JSONPointers: id.JSONPointers, JQPathExpressions: id.JQPathExpressions, ManagedFieldsManagers: id.ManagedFieldsManagers,
		})
	}
	labelDrops := droppedLabels
	if a.parentBy == argorules.AppInstance {
		// Argo CD's tracking label here, not a label of the app's own.
		labelDrops = append(append([]string(nil), droppedLabels...), argorules.AppInstance)
	}
	out.Labels = b.keep(a, src.Labels, labelDrops, "label")
	out.Annotations = b.keep(a, src.Annotations, droppedAnnotations, "annotation")
	if a.hasW {
		out.Annotations = with(out.Annotations, syncwave.Annotation, fmt.Sprint(a.wave))
	}
	if path := a.path(); len(path) > 0 {
		out.Annotations = with(out.Annotations, syncwave.PathAnnotation, syncwave.FormatPath(path))
	}
	return out, nil
}

func with(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// keep copies metadata without the keys the import leaves out, noting them.
func (b *builder) keep(a *app, in map[string]string, drop []string, what string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if appdiff.Dropped(k, drop) {
			// Not worth a note: the wave moves (the header says so), and
			// deployctl's own labels come back from generate.
			own := strings.HasPrefix(k, "deployctl.dev/") || (k == compile.LabelManagedBy && v == compile.ManagedBy)
			if k != syncwave.ArgoCDAnnotation && !own {
				b.dropped[what+" "+k] = append(b.dropped[what+" "+k], a.name)
			}
			continue
		}
		out = with(out, k, v)
	}
	return out
}

// source converts one source, with its Argo CD 3 fields (v3), leaving out
// what spec.defaults.source gives.
func source(s appv1.ApplicationSource, v3 appread.V3Source, def *spec.Source, multi bool) (spec.Source, error) {
	out := spec.Source{RepoURL: s.RepoURL, TargetRevision: s.TargetRevision, Path: s.Path, Chart: s.Chart, Ref: s.Ref, TagPrefix: v3.TagPrefix}
	switch {
	case s.Chart != "" && s.TargetRevision == "":
		return out, fmt.Errorf("chart %q has no targetRevision (Argo CD takes the latest): pin the chart version", s.Chart)
	case s.Chart == "" && s.Path == "" && !(multi && s.Ref != ""):
		return out, fmt.Errorf("source %s has no path or chart: set path (\".\" for the repository's root)", s.RepoURL)
	}
	if def != nil {
		if out.RepoURL == def.RepoURL {
			out.RepoURL = ""
		}
		if out.TargetRevision == def.TargetRevision {
			out.TargetRevision = ""
		}
	}
	// The spec's source is Argo CD's, field for field (pkg/spec): what
	// the spec's types do not have is found by the round trip.
	if h := s.Helm; h != nil && h.ValuesObject != nil && len(h.ValuesObject.Raw) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(h.ValuesObject.Raw, &obj); err != nil {
			return out, fmt.Errorf("helm.valuesObject is not an object: %w", err)
		}
	}
	var opts spec.Source
	raw, _ := json.Marshal(appv1.ApplicationSource{Helm: s.Helm, Kustomize: s.Kustomize, Directory: s.Directory, Plugin: s.Plugin})
	if err := json.Unmarshal(raw, &opts); err != nil {
		return out, fmt.Errorf("helm, kustomize, directory or plugin: %w", err)
	}
	out.Name, out.Helm, out.Kustomize, out.Directory, out.Plugin = s.Name, opts.Helm, opts.Kustomize, opts.Directory, opts.Plugin
	if types := out.Types(); len(types) > 1 {
		return out, fmt.Errorf("source %s sets %s: Argo CD refuses it (\"multiple application sources defined\"): keep the one it renders with", s.RepoURL, strings.Join(types, " and "))
	}
	if k := v3.Kustomize; k != nil && out.Kustomize != nil {
		out.Kustomize.IgnoreMissingComponents, out.Kustomize.LabelIncludeTemplates = k.IgnoreMissingComponents, k.LabelIncludeTemplates
	}
	if d := v3.Directory; d != nil && out.Directory != nil {
		out.Directory.DisableExtensionFilter = d.DisableExtensionFilter
	}
	return out, nil
}

// withoutLabel is m, for the round trip, without a label the import leaves
// out on purpose (its notes say so).
func withoutLabel(m *appread.Manifest, key string) *appread.Manifest {
	raw := m.View()
	md, _ := raw["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if _, ok := labels[key]; !ok {
		return m
	}
	delete(labels, key)
	out := *m
	out.Raw, _ = json.Marshal(raw)
	return &out
}
