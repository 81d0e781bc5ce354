package importer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/importer/internal/words"
	"github.com/deployctl/deployctl/pkg/resdeps"
	"github.com/deployctl/deployctl/pkg/spec"
)

// fetch reads the objects of every spec app from inv: the folder's apps,
// or the Applications' managed resources (--live).
func (b *builder) fetch(inv *resdeps.Source) ([]resdeps.App, error) {
	apps := append([]*app(nil), b.apps...)
	sort.Slice(apps, func(i, j int) bool { return apps[i].name < apps[j].name })
	refs := make([]resdeps.AppRef, len(apps))
	for i, a := range apps {
		refs[i] = resdeps.AppRef{App: a.name, Namespace: a.m.App.Namespace, Application: a.m.App.Name}
	}
	ctx := b.o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return inv.Inventory(ctx, refs)
}

// ResourceSummary counts what the inventory did to the wave edges.
type ResourceSummary struct {
	Inferred    int // dependencies found in the resources
	Added       int // of them, written as new dependsOn entries
	Explained   int // wave edges a resource needs
	Unexplained int // wave edges nothing needs (dropped with PruneUnexplained)
	Through     int // of them, those that order a resource dependency through others
	Unchecked   int // wave edges between apps with no inventory
	Pruned      bool
	// Edges are the dependencies found, with their evidence.
	Edges []resdeps.Edge
}

// resources holds the wave edges against the dependencies the apps'
// resources show (pkg/resdeps): each wave edge a resource needs gets that
// evidence as its comment, one nothing needs is marked (or dropped with
// PruneUnexplained), and every resource dependency the edges do not order
// yet becomes an app's dependsOn entry, with its evidence. A resource
// dependency the waves order the other way round is an error: the file
// would have a cycle.
func (b *builder) resources() error {
	inv := b.o.Inventory
	if inv == nil {
		return nil
	}
	fetched, err := b.fetch(inv)
	if err != nil {
		return err
	}
	apps, err := b.inventoryApps(inv.Name, fetched)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, a := range apps {
		known[a.Name] = true
	}
	r := resdeps.Infer(apps)
	for _, c := range r.Conflicts {
		b.note("%s", c)
	}
	sum := &ResourceSummary{Inferred: len(r.Edges), Pruned: b.o.PruneUnexplained, Edges: r.Edges}
	b.res.Resources = sum

	d, err := b.dag()
	if err != nil {
		return err
	}
	cmp := resdeps.Compare(d, r, known)
	type key struct {
		from, to string
		stack    bool
	}
	byEdge := map[key]resdeps.Declared{}
	for _, x := range cmp.Declared {
		byEdge[key{x.From, x.To, x.Stack}] = x
	}
	drop := map[key]bool{}
	for i := range b.res.Edges {
		e := &b.res.Edges[i]
		x, ok := byEdge[key{e.From, e.To, e.Stack}]
		switch {
		case !ok:
		case len(x.Unchecked) > 0:
			e.Unchecked = x.Unchecked
			sum.Unchecked++
		case x.Supported():
			e.Reason = reason(x.Evidence, e.Stack)
			sum.Explained++
		default:
			e.Unexplained = true
			sum.Unexplained++
			if len(x.Through) > 0 {
				e.Through = through(x.Through)
				sum.Through++
			}
			if b.o.PruneUnexplained {
				drop[key{e.From, e.To, e.Stack}] = true
			}
		}
	}
	if len(drop) > 0 {
		b.res.Edges = slices.DeleteFunc(b.res.Edges, func(e Edge) bool { return drop[key{e.From, e.To, e.Stack}] })
		p := b.res.Platform
		for i := range p.Spec.Stacks {
			s := &p.Spec.Stacks[i]
			s.DependsOn = slices.DeleteFunc(s.DependsOn, func(dep string) bool { return drop[key{s.Name, dep, true}] })
			for j := range s.Apps {
				a := &s.Apps[j]
				a.DependsOn = slices.DeleteFunc(a.DependsOn, func(dep string) bool { return drop[key{a.Name, dep, false}] })
			}
		}
		if d, err = b.dag(); err != nil {
			return err
		}
	}

	// Add every dependency the entries do not order, all at once (the
	// result does not depend on an order); then a cycle is a dependency
	// whose provider now waits for its consumer, and an added entry that
	// others imply goes again.
	byName := map[string]*spec.App{}
	for i := range b.res.Platform.Spec.Stacks {
		s := &b.res.Platform.Spec.Stacks[i]
		for j := range s.Apps {
			byName[s.Apps[j].Name] = &s.Apps[j]
		}
	}
	add := resdeps.Uncovered(d, r.Edges)
	for _, e := range add {
		d.Graph.DependOn(e.From, e.To)
	}
	var cycles []error
	for _, e := range resdeps.Cyclic(d, add) {
		hint := ""
		if !b.o.PruneUnexplained && sum.Unexplained > 0 {
			hint = ", or import with --prune-unexplained if only wave entries nothing needs order them so"
		}
		cycles = append(cycles, fmt.Errorf("%s needs %s (%s), but %s already waits for %s (through the sync waves or other resources): "+
			"the spec would have a cycle; fix the waves%s", e.From, e.To, evidenceLine(e), e.To, e.From, hint))
	}
	if len(cycles) > 0 {
		return fmt.Errorf("%s: dependencies the resources show contradict the sync waves:\n  %w", inv.Name, errors.Join(cycles...))
	}
	for _, e := range add {
		a := byName[e.From]
		a.DependsOn = append(a.DependsOn, e.To)
		b.res.Edges = append(b.res.Edges, Edge{From: e.From, To: e.To, Reason: e.Text(), Resource: true})
	}
	sum.Added = len(add)
	b.dropImplied(d, byName)
	return nil
}

// dropImplied removes the added entries others imply (temporal →
// external-secrets beside temporal → external-secrets-stores, which waits
// for it): lint would name them redundant. Only added entries go;
// removing any subset of a DAG's redundant edges keeps what it orders.
func (b *builder) dropImplied(d *dag.DAG, byName map[string]*spec.App) {
	type pair struct{ from, to string }
	implied := map[pair]bool{}
	for _, e := range d.Graph.RedundantEdges() {
		implied[pair{e.From, e.To}] = true
	}
	n := 0
	b.res.Edges = slices.DeleteFunc(b.res.Edges, func(e Edge) bool {
		if !e.Resource || !implied[pair{e.From, e.To}] {
			return false
		}
		a := byName[e.From]
		a.DependsOn = slices.DeleteFunc(a.DependsOn, func(dep string) bool { return dep == e.To })
		n++
		return true
	})
	b.res.Resources.Added -= n
}

// dag is the spec's graph as built so far.
func (b *builder) dag() (*dag.DAG, error) {
	d, err := dag.Build(&spec.Document{File: b.o.File, Platform: b.res.Platform})
	if err != nil {
		return nil, fmt.Errorf("internal: the imported dependencies do not make a DAG: %w", err)
	}
	return d, nil
}

// reason is the comment of a wave edge a resource needs: the first
// evidence (the consumer named when the edge is a stack's).
func reason(ev []resdeps.Edge, stack bool) string {
	s := ev[0].Text()
	if stack {
		s = ev[0].From + " " + s
	}
	if n := len(ev) - 1; n > 0 {
		s += fmt.Sprintf("; and %d more between these stacks", n)
	}
	return s
}

// through names the first resource dependency an entry orders only by way
// of others: "grafana → ceph-storageclasses (default StorageClass
// ceph-block)".
func through(edges []resdeps.Edge) string {
	s := edges[0].Short()
	if n := len(edges) - 1; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

func evidenceLine(e resdeps.Edge) string {
	ev := e.Evidence[0]
	return fmt.Sprintf("%s at %s needs %s", ev.Object, ev.Where, ev.What)
}

// inventoryApps names every inventory app as the spec does and gives it
// its Application's destination namespace and CreateNamespace option. A
// folder that names no Application is an error (a typo would silently
// check nothing); one of an app-of-apps parent left out is noted.
func (b *builder) inventoryApps(source string, inventory []resdeps.App) ([]resdeps.App, error) {
	bySpec := map[string]*app{}
	byApp := map[string][]*app{}
	for _, a := range b.apps {
		bySpec[a.name] = a
		byApp[a.m.App.Name] = append(byApp[a.m.App.Name], a)
	}
	parents := map[string]bool{}
	for _, a := range b.all {
		if a.children > 0 && !a.self {
			parents[a.m.App.Name] = true
		}
	}
	var out []resdeps.App
	var unknown, ignored []string
	have := map[string]bool{}
	for _, x := range inventory {
		a := bySpec[x.Name]
		if a == nil && len(byApp[x.Name]) == 1 {
			a = byApp[x.Name][0]
		}
		switch {
		case a == nil && parents[x.Name]:
			ignored = append(ignored, x.Name)
			continue
		case a == nil:
			unknown = append(unknown, x.Name)
			continue
		case have[a.name]:
			unknown = append(unknown, x.Name+" (again: "+a.name+")")
			continue
		}
		have[a.name] = true
		x.Name = a.name
		x.Namespace = a.m.App.Spec.Destination.Namespace
		x.CreatesNamespace = slices.Contains(syncOptions(a.m.App), "CreateNamespace=true")
		out = append(out, x)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("%s: no Application of the input is named %s: name each folder after its Application", source, strings.Join(unknown, ", "))
	}
	if len(ignored) > 0 {
		b.note("%s: app-of-apps parents are not apps of the spec, their resources not read: %s", source, strings.Join(ignored, ", "))
	}
	var missing []string
	for _, a := range b.apps {
		if !have[a.name] {
			missing = append(missing, a.name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		b.note("%s has nothing for %s: what they need or provide is unknown, and their wave edges are kept as they are: %s",
			source, words.Plural(len(missing), "app"), words.Summarize(missing, 12))
	}
	return out, nil
}

// resourceLines explain the inventory's marks in the file's header.
func (b *builder) resourceLines(r *ResourceSummary) []string {
	fate := "kept and marked \"from sync-wave only\": delete them, or import again with --prune-unexplained"
	if r.Pruned {
		fate = "dropped (--prune-unexplained)"
	}
	return words.Wrap(fmt.Sprintf("Held against what the apps deploy (%s): %d dependencies found in the resources, %d of them added as "+
		"entries marked \"needs ... from APP\" (the others the waves order already); %d wave entries a resource needs, marked with it; "+
		"%d not checked (an app without inventory); %d that nothing needs directly, %s (%d of them order a dependency through "+
		"others and say which: declare it before you delete one by hand).",
		b.o.Inventory.Name, r.Inferred, r.Added, r.Explained, r.Unchecked, r.Unexplained, fate, r.Through), 86)
}
