// Package scc finds strongly connected components with Tarjan's algorithm.
//
// It is iterative rather than recursive so that a 10,000-node dependency
// chain cannot exhaust the goroutine stack, and it works on dense integer
// IDs so the caller decides what the nodes mean.
package scc

// Tarjan returns the strongly connected components of the graph whose
// successors of node v are adj[v]. Every node appears in exactly one
// component, singletons included. Components come out in reverse
// topological order of the condensation (a component before any that
// reaches it); within one, nodes are in the order Tarjan pops them. The
// result is deterministic for a given adj. Runs in O(V+E).
func Tarjan(adj [][]int) [][]int {
	n := len(adj)
	const unvisited = -1
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = unvisited
	}
	var (
		stack  []int   // Tarjan's node stack
		frames []frame // explicit call stack replacing recursion
		comps  [][]int
		next   int
		// Every node lands in exactly one component, so all components
		// share one backing array instead of one allocation each.
		members = make([]int, 0, n)
	)
	visit := func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		frames = append(frames, frame{v: v})
	}
	for root := 0; root < n; root++ {
		if index[root] != unvisited {
			continue
		}
		visit(root)
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			v := f.v
			if f.edge < len(adj[v]) {
				w := adj[v][f.edge]
				f.edge++
				if index[w] == unvisited {
					visit(w) // may move frames; f is not used after this
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			// All successors done: "return" from v.
			frames = frames[:len(frames)-1]
			if low[v] == index[v] {
				start := len(members)
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					members = append(members, w)
					if w == v {
						break
					}
				}
				comps = append(comps, members[start:len(members):len(members)])
			}
			if len(frames) > 0 {
				if p := frames[len(frames)-1].v; low[v] < low[p] {
					low[p] = low[v]
				}
			}
		}
	}
	return comps
}

type frame struct {
	v    int // node being visited
	edge int // next index into adj[v] to explore
}
