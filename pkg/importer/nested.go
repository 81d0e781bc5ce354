package importer

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/importer/internal/words"
)

// Nested sync waves (--stack-from parent). Argo CD orders the Applications
// of one parent's sync by their waves, and an Application whose health
// check is on (generate restores it) is Healthy only when all it deploys
// is. So:
//
//  1. Waves order siblings only: children of one parent, by wave inside
//     that parent. Apps with no parent in the input are ordered among
//     themselves (as if one absent parent synced them).
//  2. A member of wave w starts when every sibling of the nearest lower
//     wave is done; a sibling is done when it and everything below it is
//     Healthy (lower waves are done before it, so the nearest is enough).
//  3. A parent's children start when the parent starts: they wait for
//     what the parent waits for (rule 2 one level up, and so on to the
//     top), never less.
//  4. A parent is done when all its children (and their descendants) are.
//  5. A parent that deploys resources besides Applications is an app for
//     those, a member of its own sync whose waves span those of its
//     resources [lo, hi] (a PreSync hook before all waves, a PostSync hook
//     after; a source not read, such as a chart, spans all): it waits for
//     the children of waves below lo, the children of waves above hi wait
//     for it, and it is not ordered against the children in between (one
//     Application's waves cannot interleave with other Applications').
//     Beside children of a single wave within its span it shares their
//     stack.
//  6. A parent of nothing but Applications is not an app, the root
//     included: deployctl creates its children itself.
//
// Each wave of a parent's leaf children is one stack; its dependsOn
// lists the stacks whose joins mean "done" (rule 2, or 3 for the first
// wave). Edges stay linear: a stack of n apps waiting for one of m costs
// n + m edges in the DAG and one line in the spec.

// group is one parent's children (or the apps without a parent).
type group struct {
	key, name string
	app       *app // the parent, when in the input
	slots     map[int]*slot
	self      *app // the parent's own app (rule 5)
	selfStack string
	// selfLo and selfHi bound the waves of the own app's resources.
	selfLo, selfHi int
	pos            []sortKey
}

// slot is one wave of a group.
type slot struct {
	wave    int
	leaves  []*app
	parents []*group
	stack   string
}

type sortKey struct {
	wave int
	name string
}

type nested struct {
	groups   map[string]*group
	ordered  []*group
	stackKey map[string][]sortKey
}

func groupKey(a *app) string {
	switch {
	case a.parent != nil:
		return a.parent.key
	case a.parentName != "":
		return "?" + a.parentKind + "/" + a.parentName
	}
	return ""
}

// nest builds the groups and names every stack (apps are named already).
func (b *builder) nest(used map[string]bool) {
	n := &nested{groups: map[string]*group{}, stackKey: map[string][]sortKey{}}
	get := func(key string, a *app) *group {
		g := n.groups[key]
		if g == nil {
			g = &group{key: key, slots: map[int]*slot{}}
			switch {
			case key == "":
				g.name = Ungrouped
			case a.parent != nil:
				g.name = a.parent.m.App.Name
				g.app = a.parent
			default:
				g.name = a.parentName
			}
			n.groups[key] = g
		}
		return g
	}
	for _, a := range b.all {
		if a.out {
			continue // renders only what deployctl creates, children of an ApplicationSet
		}
		g := get(groupKey(a), a)
		s := g.slots[a.wave]
		if s == nil {
			s = &slot{wave: a.wave}
			g.slots[a.wave] = s
		}
		if a.children == 0 {
			s.leaves = append(s.leaves, a)
		}
	}
	// Parents as members of their own parent's group.
	for _, a := range b.all {
		if a.children == 0 {
			continue
		}
		g := n.groups[a.key]
		pg := n.groups[groupKey(a)]
		pg.slots[a.wave].parents = append(pg.slots[a.wave].parents, g)
		if a.self {
			g.self = a
		}
	}
	// Positions, outermost first, for a stable file order.
	var pos func(g *group) []sortKey
	pos = func(g *group) []sortKey {
		if g.pos != nil || g.app == nil {
			if g.pos == nil {
				g.pos = []sortKey{{math.MinInt, g.name}}
			}
			return g.pos
		}
		up := pos(n.groups[groupKey(g.app)])
		g.pos = append(append([]sortKey(nil), up...), sortKey{g.app.wave, g.name})
		return g.pos
	}
	for _, g := range n.groups {
		pos(g)
		n.ordered = append(n.ordered, g)
	}
	sort.Slice(n.ordered, func(i, j int) bool { return lessKeys(n.ordered[i].pos, n.ordered[j].pos) })
	for _, g := range n.ordered {
		withStack := 0
		for _, s := range g.slots {
			if len(s.leaves) > 0 {
				withStack++
			}
		}
		base := g.name
		if g.self != nil {
			base += "-apps"
		}
		for _, w := range g.waves() {
			s := g.slots[w]
			if len(s.leaves) == 0 {
				continue
			}
			name := base
			if withStack > 1 {
				name = fmt.Sprintf("%s-wave-%s", base, strings.Replace(fmt.Sprint(w), "-", "m", 1))
			}
			s.stack = b.stackName(name, used)
			n.stackKey[s.stack] = append(append([]sortKey(nil), g.pos...), sortKey{w, ""})
			for _, a := range s.leaves {
				a.stack = s.stack
			}
		}
		if g.self != nil {
			g.selfLo, g.selfHi = 0, 0
			if o := b.own[g.self]; o != nil && o.lo <= o.hi {
				g.selfLo, g.selfHi = o.lo, o.hi
			}
		}
		if ws := g.waves(); g.self != nil && len(ws) == 1 && g.slots[ws[0]].stack != "" && g.selfLo <= ws[0] && ws[0] <= g.selfHi {
			// One wave, among the own resources' waves: the own app
			// starts and ends with it (rule 5), so it shares its stack.
			s := g.slots[ws[0]]
			s.leaves = append(s.leaves, g.self)
			g.self.stack = s.stack
		} else if g.self != nil {
			g.selfStack = b.stackName(g.name+"-own", used)
			n.stackKey[g.selfStack] = append(append([]sortKey(nil), g.pos...), sortKey{math.MinInt, ""})
			g.self.stack = g.selfStack
		}
	}
	if g := n.groups[""]; g != nil {
		var names []string
		for _, s := range g.slots {
			for _, a := range s.leaves {
				names = append(names, a.name)
			}
		}
		if len(names) > 0 {
			sort.Strings(names)
			b.note("no parent Application in the input, ordered among themselves by wave (rule 1): %s", words.Summarize(names, 12))
		}
	}
	b.nested = n
}

func (b *builder) stackName(raw string, used map[string]bool) string {
	s := dnsLabel(raw)
	if s == "" {
		s = "stack"
	}
	s = unique(s, "stack", used)
	used[s] = true
	return s
}

func lessKeys(x, y []sortKey) bool {
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i].wave != y[i].wave {
			return x[i].wave < y[i].wave
		}
		if x[i].name != y[i].name {
			return x[i].name < y[i].name
		}
	}
	return len(x) < len(y)
}

func (g *group) waves() []int {
	out := make([]int, 0, len(g.slots))
	for w := range g.slots {
		out = append(out, w)
	}
	sort.Ints(out)
	return out
}

// lower is the nearest wave of g below w.
func (g *group) lower(w int) (*slot, bool) {
	var best *slot
	for v, s := range g.slots {
		if v < w && (best == nil || v > best.wave) {
			best = s
		}
	}
	return best, best != nil
}

// done lists the stacks whose joins mean "slot s and all below it done"
// (rules 2 and 4).
func (n *nested) done(s *slot) []string {
	var out []string
	if s.stack != "" {
		out = append(out, s.stack)
	}
	for _, p := range s.parents {
		out = append(out, n.complete(p)...)
	}
	return out
}

// complete: the stacks that mean group g is done (rule 4).
func (n *nested) complete(g *group) []string {
	ws := g.waves()
	top := g.slots[ws[len(ws)-1]]
	out := n.done(top)
	if g.selfStack != "" && g.selfHi >= top.wave {
		out = append(out, g.selfStack) // else the top wave waits for it
	}
	return out
}

// dep is one stack a stack waits for, with the waves and the parent whose
// sync orders them, for the comment.
type dep struct {
	stack    string
	from, to int
	under    string
}

func deps(stacks []string, from, to int, under string) []dep {
	out := make([]dep, len(stacks))
	for i, s := range stacks {
		out[i] = dep{s, from, to, under}
	}
	return out
}

// before: what a member of wave w of g waits for (rules 2, 3 and 5): the
// nearest lower wave, the own resources when all of theirs are lower and
// the nearest lower wave does not wait for them already, else what g's
// parent waits for.
func (n *nested) before(g *group, w int) []dep {
	var out []dep
	l, ok := g.lower(w)
	if ok {
		out = deps(n.done(l), w, l.wave, g.name)
	}
	if g.selfStack != "" && g.selfHi < w && (!ok || g.selfHi >= l.wave) {
		out = append(out, dep{g.selfStack, w, g.selfHi, g.name})
	}
	if len(out) > 0 {
		return out
	}
	return n.start(g)
}

// start: what g's members wait for before their first wave (rule 3).
func (n *nested) start(g *group) []dep {
	if g.app == nil {
		return nil
	}
	return n.before(n.groups[groupKey(g.app)], g.app.wave)
}

// own: what g's own app waits for: the nearest wave below all of its
// resources' waves, else what g's members start with.
func (n *nested) own(g *group) []dep {
	if l, ok := g.lower(g.selfLo); ok && g.selfLo != math.MinInt {
		return deps(n.done(l), g.selfLo, l.wave, g.name)
	}
	return n.start(g)
}

// nestedEdges sets every stack's dependsOn and records the edges.
func (b *builder) nestedEdges() {
	n := b.nested
	edges := map[string][]Edge{}
	add := func(stack string, ds []dep) {
		seen := map[string]bool{}
		for _, d := range ds {
			if seen[d.stack] || d.stack == stack {
				continue
			}
			seen[d.stack] = true
			edges[stack] = append(edges[stack], Edge{From: stack, To: d.stack, FromWave: d.from, ToWave: d.to, Stack: true, Under: d.under})
		}
	}
	for _, g := range n.ordered {
		for _, w := range g.waves() {
			s := g.slots[w]
			if s.stack == "" {
				continue
			}
			add(s.stack, n.before(g, w))
		}
		if g.selfStack != "" {
			add(g.selfStack, n.own(g))
		}
	}
	p := b.res.Platform
	for i := range p.Spec.Stacks {
		s := &p.Spec.Stacks[i]
		es := edges[s.Name]
		sort.Slice(es, func(x, y int) bool { return es[x].To < es[y].To })
		for _, e := range es {
			s.DependsOn = append(s.DependsOn, e.To)
			b.res.Edges = append(b.res.Edges, e)
		}
	}
}

// nestedOrder sorts stacks by their place in the tree (outermost waves
// first) and apps by name.
func (b *builder) nestedOrder() {
	p := b.res.Platform
	for i := range p.Spec.Stacks {
		apps := p.Spec.Stacks[i].Apps
		sort.Slice(apps, func(x, y int) bool { return apps[x].Name < apps[y].Name })
	}
	key := b.nested.stackKey
	sort.SliceStable(p.Spec.Stacks, func(x, y int) bool {
		kx, ky := key[p.Spec.Stacks[x].Name], key[p.Spec.Stacks[y].Name]
		if lessKeys(kx, ky) != lessKeys(ky, kx) {
			return lessKeys(kx, ky)
		}
		return p.Spec.Stacks[x].Name < p.Spec.Stacks[y].Name
	})
}

// inferenceLines explain the inferred edges in the file's header.
func (b *builder) inferenceLines() []string {
	if b.nested != nil {
		return []string{
			"Every dependsOn entry marked \"inferred from sync-wave A → B in P\" comes from",
			"argocd.argoproj.io/sync-wave as Argo CD applies it: P's sync waits for its",
			"wave-A children (and all below them) before wave B. Each wave of a parent's",
			"children is a stack; its dependsOn lists the stacks that mean \"the wave before is",
			"done\" (for a first wave: what the parent itself waited for). Waves say what came",
			"first, not what needs what: delete the entries that are not real dependencies.",
			"`deployctl lint` names the redundant ones.",
		}
	}
	return []string{
		"Every dependsOn entry marked \"inferred from sync-wave A → B\" comes from",
		"argocd.argoproj.io/sync-wave (A: the dependency's wave, B: this one's): inside a",
		"stack, each app waits for the apps of the nearest lower wave; a stack made of one",
		"parent Application's children waits for the sibling stacks of the nearest lower",
		"wave. Waves say what came first, not what needs what: delete the entries that",
		"are not real dependencies. `deployctl lint` names the redundant ones.",
	}
}
