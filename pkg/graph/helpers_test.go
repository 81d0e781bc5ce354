package graph

import (
	"fmt"
	"math/rand"
	"strings"
)

// build parses "a>b b>c d": a depends on b, b on c, and d stands alone.
func build(spec string) *Graph {
	g := New()
	for _, tok := range strings.Fields(spec) {
		if from, to, ok := strings.Cut(tok, ">"); ok {
			g.DependOn(from, to)
		} else {
			g.AddNode(tok)
		}
	}
	return g
}

// randomDAG has n nodes and about m edges. Edges follow a hidden random
// order while names come from a different permutation, so name order
// says nothing about dependency order and tie-breaks are exercised.
func randomDAG(rng *rand.Rand, n, m int) *Graph {
	g, names := randomNodes(rng, n)
	for n > 1 && m > 0 {
		i, j := rng.Intn(n), rng.Intn(n)
		if i == j {
			continue
		}
		g.DependOn(names[max(i, j)], names[min(i, j)])
		m--
	}
	return g
}

// randomGraph may have cycles and self-loops.
func randomGraph(rng *rand.Rand, n, m int) *Graph {
	g, names := randomNodes(rng, n)
	for ; m > 0; m-- {
		g.DependOn(names[rng.Intn(n)], names[rng.Intn(n)])
	}
	return g
}

// randomNodes returns a graph of n unconnected nodes and their names in a
// random order.
func randomNodes(rng *rand.Rand, n int) (*Graph, []string) {
	g := New()
	names := make([]string, n)
	for i, p := range rng.Perm(n) {
		names[i] = fmt.Sprintf("n%05d", p)
		g.AddNode(names[i])
	}
	return g, names
}

// reachable is a brute-force BFS: every node reachable from s along next
// by a path of one or more edges.
func reachable(s string, next func(string) []string) map[string]bool {
	seen := map[string]bool{}
	queue := next(s)
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if !seen[v] {
			seen[v] = true
			queue = append(queue, next(v)...)
		}
	}
	return seen
}

func allReach(g *Graph) map[string]map[string]bool {
	r := map[string]map[string]bool{}
	for _, n := range g.Nodes() {
		r[n] = reachable(n, g.Deps)
	}
	return r
}

func hasEdge(g *Graph, from, to string) bool {
	for _, d := range g.Deps(from) {
		if d == to {
			return true
		}
	}
	return false
}

func edges(g *Graph) []Edge {
	var out []Edge
	for _, n := range g.Nodes() {
		for _, d := range g.Deps(n) {
			out = append(out, Edge{n, d})
		}
	}
	return out
}
