// Package graph is a generic directed dependency graph over string IDs.
//
// It knows nothing about what the nodes are: callers map their own objects
// to IDs. An edge n→d means "n depends on d", so d must come first in any
// apply order. Every result is deterministic: wherever a choice exists,
// names break the tie.
//
// A Graph is not safe for concurrent mutation; concurrent reads are fine.
package graph

import (
	"slices"
	"strings"
)

// Graph is a directed graph. The zero value is an empty graph ready to use.
type Graph struct {
	// Nodes are numbered in insertion order and edges stored as numbers in
	// both directions, so the algorithms never hash a string per edge.
	ids   map[string]int
	names []string
	deps  [][]int             // deps[n]: what n depends on, in insertion order
	rdeps [][]int             // rdeps[d]: what depends on d
	edges map[uint64]struct{} // from<<32 | to, to keep DependOn idempotent
}

// Edge is one dependency: From depends on To.
type Edge struct{ From, To string }

// New returns an empty graph.
func New() *Graph { return &Graph{} }

func (g *Graph) id(name string) int {
	if id, ok := g.ids[name]; ok {
		return id
	}
	if g.ids == nil {
		g.ids = map[string]int{}
		g.edges = map[uint64]struct{}{}
	}
	id := len(g.names)
	g.ids[name] = id
	g.names = append(g.names, name)
	g.deps = append(g.deps, nil)
	g.rdeps = append(g.rdeps, nil)
	return id
}

// AddNode adds id; adding an existing node does nothing.
func (g *Graph) AddNode(id string) { g.id(id) }

// DependOn records that n depends on dep, adding either node if missing.
// Repeating an edge does nothing. n == dep makes a self-loop (a cycle).
func (g *Graph) DependOn(n, dep string) {
	from, to := g.id(n), g.id(dep)
	key := uint64(from)<<32 | uint64(to)
	if _, ok := g.edges[key]; ok {
		return
	}
	g.edges[key] = struct{}{}
	g.deps[from] = append(g.deps[from], to)
	g.rdeps[to] = append(g.rdeps[to], from)
}

// Has reports whether id is a node.
func (g *Graph) Has(id string) bool {
	_, ok := g.ids[id]
	return ok
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.names) }

// EdgeCount returns the number of edges.
func (g *Graph) EdgeCount() int { return len(g.edges) }

// Nodes returns every node, sorted by name.
func (g *Graph) Nodes() []string {
	if len(g.names) == 0 {
		return nil
	}
	return slices.Sorted(slices.Values(g.names))
}

// Deps returns the direct dependencies of n, sorted; nil if n has none or
// is not a node.
func (g *Graph) Deps(n string) []string { return g.neighbours(g.deps, n) }

// Dependents returns the nodes that depend directly on n, sorted.
func (g *Graph) Dependents(n string) []string { return g.neighbours(g.rdeps, n) }

func (g *Graph) neighbours(adj [][]int, n string) []string {
	id, ok := g.ids[n]
	if !ok || len(adj[id]) == 0 {
		return nil
	}
	return g.sortedNames(adj[id])
}

// Reverse returns a new graph with the same nodes and every edge flipped,
// e.g. to turn an apply order into a teardown order.
func (g *Graph) Reverse() *Graph {
	r := New()
	for _, n := range g.names {
		r.AddNode(n)
	}
	for from, deps := range g.deps {
		for _, to := range deps {
			r.DependOn(g.names[to], g.names[from])
		}
	}
	return r
}

// Subgraph returns a new graph of the nodes for which keep is true and the
// edges between them.
func (g *Graph) Subgraph(keep func(id string) bool) *Graph {
	s := New()
	kept := make([]bool, len(g.names))
	for id, n := range g.names {
		if kept[id] = keep(n); kept[id] {
			s.AddNode(n)
		}
	}
	for from, deps := range g.deps {
		for _, to := range deps {
			if kept[from] && kept[to] {
				s.DependOn(g.names[from], g.names[to])
			}
		}
	}
	return s
}

// sortedNames returns the names of ids, sorted; nil for none.
func (g *Graph) sortedNames(ids []int) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = g.names[id]
	}
	slices.Sort(out)
	return out
}

// indexed is a read-only snapshot of g with nodes numbered in name order.
// Algorithms run on it rather than on the maps: integer IDs make them
// faster, and because index order is name order, "smallest index" is
// "smallest name", which is how every tie is broken.
type indexed struct {
	names []string
	deps  [][]int // sorted ascending
	rdeps [][]int // dependents, sorted ascending
}

func (g *Graph) index() *indexed {
	n := len(g.names)
	byName := make([]int, n) // rank → insertion id
	for i := range byName {
		byName[i] = i
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(g.names[a], g.names[b]) })
	rank := make([]int, n) // insertion id → rank
	ix := &indexed{names: make([]string, n), deps: make([][]int, n), rdeps: make([][]int, n)}
	for r, id := range byName {
		rank[id] = r
		ix.names[r] = g.names[id]
	}
	// One backing array per direction keeps 50k edges to two allocations.
	depBuf := make([]int, 0, len(g.edges))
	rdepBuf := make([]int, 0, len(g.edges))
	for r, id := range byName {
		depBuf, ix.deps[r] = appendRanked(depBuf, g.deps[id], rank)
		rdepBuf, ix.rdeps[r] = appendRanked(rdepBuf, g.rdeps[id], rank)
	}
	return ix
}

// appendRanked appends the ranks of ids to buf and returns buf and the
// sorted sub-slice it added. buf never grows past its capacity, so earlier
// sub-slices stay valid.
func appendRanked(buf, ids, rank []int) ([]int, []int) {
	start := len(buf)
	for _, id := range ids {
		buf = append(buf, rank[id])
	}
	part := buf[start:len(buf):len(buf)]
	slices.Sort(part)
	return buf, part
}

func (ix *indexed) namesOf(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = ix.names[id]
	}
	return out
}
