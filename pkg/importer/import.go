// Package importer turns existing Argo CD Applications into a platform
// spec: an app-of-apps rendered by Helm, a `kubectl get applications -A -o
// yaml` dump, or folders of Application manifests (read by appread).
// Stacks come from a label, an annotation, the parent Application or the
// folder; dependencies are inferred from argocd.argoproj.io/sync-wave,
// conservatively, and marked as inferred so a person can prune them. The result is checked by the
// product's own loader and compiler: every Application the spec generates is
// compared with its original, and whatever the spec cannot express is
// reported, never dropped silently.
package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/importer/appdiff"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/importer/argorules"
	"github.com/deployctl/deployctl/pkg/importer/argorules/syncwave"
	"github.com/deployctl/deployctl/pkg/importer/internal/words"
	"github.com/deployctl/deployctl/pkg/resdeps"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Ungrouped is the stack of apps the chosen source puts in no stack.
const Ungrouped = "ungrouped"

// Placeholders for what Applications do not say.
const (
	DefaultImage             = "REGISTRY/deploystep:TAG"
	DefaultWorkflowNamespace = "argo"
	DefaultServiceAccount    = "deployctl"
)

// StackFrom says where an app's stack comes from.
type StackFrom struct {
	Kind string // label, annotation, parent or folder
	Key  string // the label or annotation key
}

// ParseStackFrom reads --stack-from: label=KEY, annotation=KEY, parent, folder.
func ParseStackFrom(s string) (StackFrom, error) {
	if s == "parent" || s == "folder" {
		return StackFrom{Kind: s}, nil
	}
	if k, v, ok := strings.Cut(s, "="); ok && (k == "label" || k == "annotation") && v != "" {
		return StackFrom{Kind: k, Key: v}, nil
	}
	return StackFrom{}, fmt.Errorf("--stack-from %q: want label=KEY, annotation=KEY, parent or folder", s)
}

func (s StackFrom) String() string {
	if s.Key != "" {
		return s.Kind + " " + s.Key
	}
	return s.Kind
}

// Options are what the Applications cannot tell.
type Options struct {
	Name      string // the platform's name (metadata.name)
	StackFrom StackFrom
	// ArgoCDNamespace is where Argo CD runs; "" takes the namespace most of
	// the Applications are in.
	ArgoCDNamespace string
	// ArgoCDServer is host:port of argocd-server; "" derives it.
	ArgoCDServer      string
	WorkflowNamespace string
	ServiceAccount    string
	Image             string
	// File names the spec in messages (the output file, or a placeholder).
	File string
	// Inventory, when set, holds the wave edges against what the apps
	// deploy (resources.go).
	Inventory *resdeps.Source
	// Context bounds the reads of a --live Inventory; nil is
	// context.Background().
	Context context.Context
	// PruneUnexplained drops the wave edges no resource needs.
	PruneUnexplained bool
}

// Edge is one inferred dependency: From waits for To.
type Edge struct {
	From, To         string
	FromWave, ToWave int
	// Stack: between stacks (from their parent Applications' waves), not apps.
	Stack bool
	// Under is the parent Application whose sync orders the two waves
	// (--stack-from parent).
	Under string
	// With an inventory: Reason is the evidence a resource needs the edge
	// ("needs CRD ... from ..."); Resource says the resources alone made
	// it; Unexplained, that nothing needs it; Unchecked, the apps with no
	// inventory that leave it undecided.
	Reason      string
	Resource    bool
	Unexplained bool
	Unchecked   []string
	// Through: nothing needs it directly, but it orders this resource
	// dependency by way of what its target waits for.
	Through string
}

// Comment is the YAML comment written beside the edge.
func (e Edge) Comment() string {
	switch {
	case e.Reason != "":
		return e.Reason
	case e.Unexplained && e.Through != "":
		return "from sync-wave only, but it orders " + e.Through + " through what it waits for: declare that before you delete it"
	case e.Unexplained:
		return "from sync-wave only: no resource needs it (" + e.waveComment() + ")"
	case len(e.Unchecked) > 0:
		return e.waveComment() + "; not checked: no inventory for " + strings.Join(e.Unchecked, ", ")
	}
	return e.waveComment()
}

func (e Edge) waveComment() string {
	if e.Under != "" {
		to := fmt.Sprint(e.ToWave)
		if e.ToWave == math.MinInt {
			to = "PreSync" // own resources that are all PreSync hooks
		}
		return fmt.Sprintf("inferred from sync-wave %s → %d in %s", to, e.FromWave, e.Under)
	}
	return fmt.Sprintf("inferred from sync-wave %d → %d", e.ToWave, e.FromWave)
}

// Result is an import: the spec, as data and as the file to write.
type Result struct {
	Platform *spec.Platform
	YAML     []byte
	Edges    []Edge
	// Notes say what the import changed or left out on purpose.
	Notes []string
	// Differences are what the spec cannot express: fields of an original
	// Application its generated Application does not have (or has otherwise).
	Differences []appdiff.Difference
	// Sources maps each spec app to the Application it came from, as
	// compared (Raw); its typed App is released once the spec is built
	// (the Input passed to Import keeps its own).
	Sources map[string]*appread.Manifest
	// Resources sums up what Options.Inventory did; nil without one.
	Resources *ResourceSummary
}

// app is one imported Application while the spec is built.
type app struct {
	m      *appread.Manifest
	key    string // namespace/name
	wave   int
	hasW   bool
	parent *app // the parent Application, when it is in the input
	// argorules.ParentRef names the parent as referenced (kind and name), in or not
	// in the input.
	parentKind, parentName string
	parentBy               string // how the parent was found, for notes
	children               int
	// self: a parent that also deploys its own resources, kept as an app
	// for them (builder.own says which sources).
	self bool
	// covers: its sources render something deployctl creates (a child, an
	// expanded ApplicationSet, itself); out: such a parent left out, as it
	// deploys nothing else.
	covers, out bool
	name, stack string
}

// Import builds a platform spec from Applications, checks it with the
// product's loader and compiler, and compares every generated Application
// with its original.
func Import(in *appread.Input, o Options) (*Result, error) {
	if err := in.Check(); err != nil {
		return nil, err
	}
	b := newBuilder(o)
	if err := b.build(in); err != nil {
		return nil, err
	}
	b.release()
	if err := b.check(); err != nil {
		return nil, err
	}
	return b.res, nil
}

func newBuilder(o Options) *builder {
	return &builder{o: o, res: &Result{Sources: map[string]*appread.Manifest{}}, byKey: map[string]*app{}}
}

// release drops the typed Applications: built, the spec needs only what
// the check compares (Raw). At 10,000 Applications they are 3 times the
// input, held through the check for nothing; once the caller drops its
// Input too (the import command does), they are freed.
func (b *builder) release() {
	for _, a := range b.all {
		a.m.App = nil
	}
	for _, m := range b.res.Sources {
		m.App = nil
	}
}

// build makes the spec (res.Platform) and its inferred edges; check then
// verifies it.
func (b *builder) build(in *appread.Input) error {
	if err := b.index(in); err != nil {
		return err
	}
	b.resolveParents()
	b.unreadChildren()
	b.assign()
	if err := b.platform(); err != nil {
		return err
	}
	if b.o.StackFrom.Kind == "parent" {
		b.nestedOrder()
		b.nestedEdges()
	} else {
		b.order()
		if err := b.infer(); err != nil {
			return err
		}
	}
	// Resource evidence (Options.Inventory) reads the typed Applications:
	// before release.
	return b.resources()
}

type builder struct {
	o     Options
	res   *Result
	all   []*app // every Application read, by key
	byKey map[string]*app
	apps  []*app // the ones that become spec apps
	// dropped counts the metadata keys left out, per key.
	dropped map[string][]string
	// ignoredSource: apps whose spec.source Argo CD ignores (sources set).
	ignoredSource []string
	// emptySyncOptions are apps that must say `syncOptions: []` to not
	// inherit spec.defaults.syncOptions.
	emptySyncOptions map[string]bool
	// own: what a parent found by its Git layout deploys besides children.
	own map[*app]*own
	// built: the Kustomize folders the input built (their Applications
	// have no file of their own).
	built []string
	// root and repo: the checkout the Applications were read from and the
	// repository it is (normalized), when found (gitLayout); expanded: the
	// Applications of each expanded ApplicationSet, by its namespace/name.
	root, repo string
	expanded   map[string][]*app
	// readDirs: the folders of the input's files and Kustomize builds.
	readDirs []string
	// setParent: the parent that renders each expanded ApplicationSet
	// (namespace/name), when one of the input does.
	setParent map[string]*app
	nested    *nested // --stack-from parent: the groups of nested waves
}

func (b *builder) note(format string, args ...any) {
	b.res.Notes = append(b.res.Notes, fmt.Sprintf(format, args...))
}

func (b *builder) index(in *appread.Input) error {
	for i := range in.Apps {
		m := new(appread.Manifest) // the builder's own: release leaves in.Apps as it was
		*m = in.Apps[i]
		a := &app{m: m, key: m.App.Namespace + "/" + m.App.Name}
		var unreadable bool
		a.wave, a.hasW, unreadable = argorules.SyncWave(m.App.Annotations)
		if unreadable {
			b.note("%s: sync-wave %q is not an integer to Argo CD (strconv.Atoi); it reads it as %d, and so does the import",
				a.key, m.App.Annotations[syncwave.ArgoCDAnnotation], a.wave)
		}
		b.byKey[a.key] = a
		b.all = append(b.all, a)
	}
	sort.Slice(b.all, func(i, j int) bool { return b.all[i].key < b.all[j].key })
	b.res.Notes = append(b.res.Notes, in.Notes()...)
	b.built = in.Built
	return nil
}

func (b *builder) resolveParents() {
	byName := map[string][]*app{}
	for _, a := range b.all {
		byName[a.m.App.Name] = append(byName[a.m.App.Name], a)
	}
	var appsets, badIDs []string
	for _, a := range b.all {
		t, bad := argorules.ParentRef(a.m.App)
		if bad != "" {
			badIDs = append(badIDs, a.key+": "+bad)
		}
		if t.Kind == "ApplicationSet" {
			a.parentKind, a.parentName = t.Kind, t.Name
			appsets = append(appsets, a.m.App.Namespace+"/"+t.Name+"\x00"+a.key+" ← "+t.Name)
			continue
		}
		if t.Kind == "" {
			continue
		}
		var p *app
		if t.NS != "" {
			p = b.byKey[t.NS+"/"+t.Name]
		} else if cands := byName[t.Name]; len(cands) == 1 {
			p = cands[0]
		} else {
			for _, c := range cands {
				if c.m.App.Namespace == a.m.App.Namespace {
					p = c
				}
			}
		}
		if p == a || (p == nil && t.MustResolve) {
			continue
		}
		a.parentKind, a.parentName, a.parentBy = t.Kind, t.Name, t.By
		a.parent = p
	}
	if len(badIDs) > 0 {
		b.note("tracking not read (Argo CD does not read it either): %s", words.Summarize(badIDs, 6))
	}
	b.own = b.gitLayout()
	// A parent chain that loops (hand-edited labels) is cut where it closes.
	for _, a := range b.all {
		seen := map[*app]bool{a: true}
		for p := a; p.parent != nil; p = p.parent {
			if seen[p.parent] {
				p.parent = nil
				break
			}
			seen[p.parent] = true
		}
	}
	by := map[string]int{}
	for _, a := range b.all {
		if a.parent != nil {
			a.parent.children++
			by[a.parentBy]++
		}
	}
	if len(by) > 0 {
		var ways []string
		for k, n := range by {
			ways = append(ways, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(ways)
		b.note("parents found by %s", strings.Join(ways, ", "))
	}
	var parents, selfs []string
	for _, a := range b.all {
		if a.children == 0 && !a.covers {
			b.apps = append(b.apps, a)
			continue
		}
		o := b.own[a]
		if o != nil && len(o.lost) > 0 {
			// Never silent: what Argo CD deployed through the parent and
			// no app of the spec deploys.
			b.note("%s: files that hold Applications and other objects (or globs that cannot be combined) left out of its own app: move the other objects to files of their own: %s",
				a.key, strings.Join(o.lost, ", "))
		}
		if o != nil && len(o.sources) > 0 {
			a.self = true
			b.apps = append(b.apps, a)
			selfs = append(selfs, a.key)
			continue
		}
		a.out = a.children == 0
		if a.out {
			parents = append(parents, a.key+" (only ApplicationSets expanded here)")
			continue
		}
		parents = append(parents, fmt.Sprintf("%s (%d)", a.key, a.children))
	}
	if len(parents) > 0 {
		b.note("app-of-apps parents left out (deployctl creates their children itself, in dependency order; "+
			"spec.bootstrap.rootApplication hands over to Argo CD afterwards). If one deploys more than Applications, add it as an app: %s",
			strings.Join(parents, ", "))
	}
	if len(selfs) > 0 {
		b.note("parents that also deploy their own resources, kept as apps that render only those (their children's files excluded, "+
			"or Kustomize patches `$patch: delete` for their children, ApplicationSets expanded here and themselves: deployctl creates those); "+
			"their own resources sync beside their children, not interleaved by wave: %s", strings.Join(selfs, ", "))
	}
	// Known once the layout ran: which ApplicationSets a parent renders.
	var loose, rendered []string
	renderedSets := map[string]bool{}
	for _, s := range appsets {
		set, app, _ := strings.Cut(s, "\x00")
		if p := b.setParent[set]; p != nil {
			rendered = append(rendered, app)
			renderedSets[set+" (in "+p.key+")"] = true
			continue
		}
		loose = append(loose, app)
	}
	if len(loose) > 0 {
		b.note("generated by an ApplicationSet: remove them from it, or deployctl and the ApplicationSet controller will both manage them: %s",
			words.Summarize(loose, 8))
	}
	if len(rendered) > 0 {
		sets := make([]string, 0, len(renderedSets))
		for s := range renderedSets {
			sets = append(sets, s)
		}
		sort.Strings(sets)
		b.note("ApplicationSets rendered by a parent and expanded here are left out of the spec (P2: deployctl creates their Applications): %s; "+
			"where one already runs, delete it and keep its Applications before deploying: kubectl delete applicationset -n NAMESPACE NAME --cascade=orphan",
			strings.Join(sets, ", "))
	}
}

// path lists a's parents, outermost first, each with its own wave; a
// parent referenced but not in the input ends it, its wave unknown (0).
func (a *app) path() []syncwave.Step {
	var out []syncwave.Step
	last := a
	for p := a.parent; p != nil; p = p.parent {
		out = append([]syncwave.Step{{Name: p.m.App.Name, Wave: p.wave}}, out...)
		last = p
	}
	if last.parent == nil && last.parentName != "" && last.parentKind != "" {
		out = append([]syncwave.Step{{Name: last.parentName}}, out...)
	}
	return out
}

// assign gives every app its spec name and stack.
func (b *builder) assign() {
	// Apps in Argo CD's own namespace first, so they keep their names when
	// another namespace holds an Application of the same name.
	ns := b.argocdNamespace()
	sort.SliceStable(b.apps, func(i, j int) bool {
		return (b.apps[i].m.App.Namespace == ns) && (b.apps[j].m.App.Namespace != ns)
	})
	used := map[string]bool{}
	var renamed []string
	for _, a := range b.apps {
		base := dnsLabel(a.m.App.Name)
		if strings.HasPrefix(base, spec.ReservedPrefix) {
			base = "app-" + base
		}
		name := unique(base, a.m.App.Namespace, used)
		if name != a.m.App.Name {
			renamed = append(renamed, a.key+" → "+name)
		}
		a.name = name
		used[name] = true
	}
	if len(renamed) > 0 {
		b.note("renamed to unique DNS labels (spec names are Application names, unique across the platform): %s", strings.Join(renamed, ", "))
	}
	if b.o.StackFrom.Kind == "parent" {
		b.nest(used)
		return
	}
	stackNames := map[string]string{} // as read → spec name
	var ungrouped, renamedStacks []string
	for _, a := range b.apps {
		raw := b.stackOf(a)
		if raw == "" {
			ungrouped = append(ungrouped, a.name)
			raw = Ungrouped
		}
		s, ok := stackNames[raw]
		if !ok {
			s = dnsLabel(raw)
			if s == "" {
				s = "stack"
			}
			if used[s] {
				s = unique(s, "stack", used)
			}
			used[s] = true
			stackNames[raw] = s
			if s != raw {
				renamedStacks = append(renamedStacks, fmt.Sprintf("%q → %s", raw, s))
			}
		}
		a.stack = s
	}
	sort.Strings(renamedStacks)
	if len(renamedStacks) > 0 {
		b.note("stack names made unique DNS labels: %s", strings.Join(renamedStacks, ", "))
	}
	if len(ungrouped) > 0 {
		sort.Strings(ungrouped)
		b.note("no %s: in stack %s: %s", b.o.StackFrom, stackNames[Ungrouped], words.Summarize(ungrouped, 12))
	}
}

func (b *builder) stackOf(a *app) string {
	switch b.o.StackFrom.Kind {
	case "label":
		return a.m.App.Labels[b.o.StackFrom.Key]
	case "annotation":
		return a.m.App.Annotations[b.o.StackFrom.Key]
	case "folder":
		return a.m.Folder
	}
	if a.parent != nil {
		return a.parent.m.App.Name
	}
	return a.parentName
}

// argocdNamespace is the option, else where most Applications are.
func (b *builder) argocdNamespace() string {
	if b.o.ArgoCDNamespace != "" {
		return b.o.ArgoCDNamespace
	}
	var nss []string
	for _, a := range b.all {
		nss = append(nss, a.m.App.Namespace)
	}
	ns, _ := mostCommon(nss)
	if ns == "" {
		ns = "argocd"
	}
	return ns
}

// dnsLabel makes s a DNS-1123 label: lower case, [a-z0-9-], at most 63.
func dnsLabel(s string) string {
	var out strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			out.WriteRune(r)
		} else {
			out.WriteRune('-')
		}
	}
	return trimLabel(out.String())
}

func trimLabel(s string) string {
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-")
}

// unique returns base, or base-qualifier, or base-qualifier-N: the first
// not used.
func unique(base, qualifier string, used map[string]bool) string {
	if !used[base] {
		return base
	}
	q := dnsLabel(qualifier)
	cand := trimLabel(base[:max(0, min(len(base), 62-len(q)))] + "-" + q)
	for n := 2; used[cand]; n++ {
		suffix := fmt.Sprintf("-%s-%d", q, n)
		cand = trimLabel(base[:max(0, min(len(base), 63-len(suffix)))] + suffix)
	}
	return cand
}

// mostCommon is the most frequent value (ties: the smallest) and its count.
func mostCommon(vals []string) (string, int) {
	count := map[string]int{}
	for _, v := range vals {
		count[v]++
	}
	best, n := "", 0
	for v, c := range count {
		if c > n || (c == n && v < best) {
			best, n = v, c
		}
	}
	return best, n
}

// keyOf is a comparable rendering of a value, for mostCommon.
func keyOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
