package graph

// DepsClosure returns the seeds and everything they transitively depend on,
// sorted: what must exist before the seeds can be applied. Seeds that are
// not nodes are ignored. O(V+E) in the size of the closure.
func (g *Graph) DepsClosure(seeds ...string) []string {
	return g.closure(g.deps, seeds)
}

// DependentsClosure returns the seeds and everything that transitively
// depends on them, sorted: what is affected when a seed changes or is
// removed. Seeds that are not nodes are ignored.
func (g *Graph) DependentsClosure(seeds ...string) []string {
	return g.closure(g.rdeps, seeds)
}

// closure walks the stored adjacency directly rather than building an
// index, so beyond one []bool its cost is proportional to what it reaches.
func (g *Graph) closure(next [][]int, seeds []string) []string {
	seen := make([]bool, len(g.names))
	var stack, found []int
	for _, s := range seeds {
		if id, ok := g.ids[s]; ok && !seen[id] {
			seen[id] = true
			stack = append(stack, id)
		}
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		found = append(found, v)
		for _, w := range next[v] {
			if !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return g.sortedNames(found)
}
