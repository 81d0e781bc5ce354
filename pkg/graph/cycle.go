package graph

import (
	"slices"
	"strings"

	"github.com/deployctl/deployctl/pkg/graph/internal/scc"
)

// CycleError reports that the graph is not a DAG. Cycles holds one
// concrete cycle per strongly connected component, as returned by Cycles,
// so callers can show exactly which edges to break.
type CycleError struct {
	Cycles [][]string
}

// Error renders every cycle as "a → b → c → a", joined by "; ".
func (e *CycleError) Error() string {
	var b strings.Builder
	b.WriteString("dependency cycle: ")
	for i, c := range e.Cycles {
		if i > 0 {
			b.WriteString("; ")
		}
		for _, n := range c {
			b.WriteString(n)
			b.WriteString(" → ")
		}
		if len(c) > 0 {
			b.WriteString(c[0])
		}
	}
	return b.String()
}

// Cycles returns one simple cycle for each strongly connected component
// that contains a cycle: every component of two or more nodes, and every
// single node with a self-loop. A cycle [a b c] means a→b→c→a. It returns
// nil for a DAG. O(V+E).
//
// The path is chosen so it is both deterministic and short enough to read
// in an error message: it starts at the smallest name in the component,
// steps to that node's smallest-named successor inside the component, then
// returns by a shortest path, at each step taking the smallest-named
// successor that is one step closer to the start. A shortest path never
// repeats a node, so the cycle is simple. Cycles are sorted by first node.
func (g *Graph) Cycles() [][]string { return g.index().cycles() }

func (ix *indexed) cycles() [][]string {
	comps := scc.Tarjan(ix.deps)
	n := len(ix.names)
	compOf := make([]int, n)
	for ci, c := range comps {
		for _, v := range c {
			compOf[v] = ci
		}
	}
	// dist is reused across components: each BFS only touches its own nodes.
	dist := make([]int, n)
	for i := range dist {
		dist[i] = -1
	}
	var out [][]string
	for ci, comp := range comps {
		start := comp[0]
		for _, v := range comp {
			start = min(start, v)
		}
		if len(comp) == 1 {
			if _, self := slices.BinarySearch(ix.deps[start], start); self {
				out = append(out, []string{ix.names[start]})
			}
			continue
		}
		// BFS backwards from start gives each member's distance to start.
		dist[start] = 0
		queue := []int{start}
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			for _, u := range ix.rdeps[v] {
				if compOf[u] == ci && dist[u] < 0 {
					dist[u] = dist[v] + 1
					queue = append(queue, u)
				}
			}
		}
		// First hop: smallest successor other than start itself (a
		// self-loop on start would hide the rest of the component).
		cur := -1
		for _, w := range ix.deps[start] {
			if w != start && compOf[w] == ci {
				cur = w
				break
			}
		}
		path := []int{start}
		for cur != start {
			path = append(path, cur)
			for _, w := range ix.deps[cur] { // ascending: first match is smallest
				if compOf[w] == ci && dist[w] == dist[cur]-1 {
					cur = w
					break
				}
			}
		}
		out = append(out, ix.namesOf(path))
	}
	// First nodes are component minimums, so they are distinct.
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}
