package graph

import "slices"

// Layers groups nodes by longest-path depth: nodes with no dependencies
// are layer 0, and every other node sits one layer above its deepest
// dependency. Everything in a layer can run in parallel once the earlier
// layers are done. Each layer is sorted by name. On a cycle it returns a
// *CycleError. O(V+E) plus sorting each layer.
func (g *Graph) Layers() ([][]string, error) {
	ix := g.index()
	n := len(ix.names)
	pending := make([]int, n)
	var frontier []int
	for v := range n {
		pending[v] = len(ix.deps[v])
		if pending[v] == 0 {
			frontier = append(frontier, v)
		}
	}
	// Kahn's algorithm a layer at a time: a node becomes ready while its
	// last-finished, i.e. deepest, dependency's layer is processed, so it
	// lands exactly one layer above that.
	var layers [][]string
	done := 0
	for len(frontier) > 0 {
		layers = append(layers, ix.namesOf(frontier))
		done += len(frontier)
		var next []int
		for _, v := range frontier {
			for _, u := range ix.rdeps[v] {
				if pending[u]--; pending[u] == 0 {
					next = append(next, u)
				}
			}
		}
		slices.Sort(next) // index order is name order
		frontier = next
	}
	if done < n {
		return nil, &CycleError{Cycles: ix.cycles()}
	}
	return layers, nil
}
