package graph

import "time"

// CriticalPath returns the heaviest chain of dependencies, where a chain's
// weight is the sum of weight over its nodes: with weight as each node's
// duration and unlimited parallelism, makespan is the shortest possible
// total run time and path is what bounds it. The path runs in dependency
// order from a root (no dependencies) to a sink (no dependents). Among
// equally heavy chains it returns the lexicographically smallest by name.
// weight is called once per node. On a cycle it returns a *CycleError; an
// empty graph gives a nil path. O((V+E) log V).
func (g *Graph) CriticalPath(weight func(id string) time.Duration) (path []string, makespan time.Duration, err error) {
	ix := g.index()
	order, err := ix.topo()
	if err != nil {
		return nil, 0, err
	}
	n := len(ix.names)
	// tail[v] is the weight of the heaviest chain from v to a sink, next[v]
	// its second node. Computing it backwards, from sinks, lets the path be
	// read forwards from a root, so name tie-breaks favour the front of the
	// path.
	tail := make([]time.Duration, n)
	next := make([]int, n)
	for i := n - 1; i >= 0; i-- {
		v := order[i]
		next[v] = -1
		var best time.Duration
		for _, u := range ix.rdeps[v] { // ascending: strict > keeps the smallest name
			if next[v] < 0 || tail[u] > best {
				best, next[v] = tail[u], u
			}
		}
		tail[v] = weight(ix.names[v]) + best
	}
	start := -1
	for v := range n {
		if len(ix.deps[v]) == 0 && (start < 0 || tail[v] > tail[start]) {
			start = v
		}
	}
	if start < 0 {
		return nil, 0, nil
	}
	for v := start; v >= 0; v = next[v] {
		path = append(path, ix.names[v])
	}
	return path, tail[start], nil
}
