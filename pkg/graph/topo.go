package graph

// TopoOrder returns every node with each node after all of its
// dependencies. Among nodes that are ready at the same time the smallest
// name goes first (Kahn's algorithm with a min-heap), so the order does
// not depend on insertion order. If the graph has a cycle it
// returns a *CycleError naming the cycles. O((V+E) log V).
func (g *Graph) TopoOrder() ([]string, error) {
	ix := g.index()
	order, err := ix.topo()
	if err != nil {
		return nil, err
	}
	return ix.namesOf(order), nil
}

// topo is Kahn's algorithm over node indices; since index order is name
// order, the heap yields the smallest ready name.
func (ix *indexed) topo() ([]int, error) {
	n := len(ix.names)
	pending := make([]int, n) // unprocessed deps per node
	var ready minHeap
	for v := range n {
		pending[v] = len(ix.deps[v])
		if pending[v] == 0 {
			ready = append(ready, v) // ascending, so already a valid heap
		}
	}
	order := make([]int, 0, n)
	for len(ready) > 0 {
		v := ready.pop()
		order = append(order, v)
		for _, u := range ix.rdeps[v] {
			if pending[u]--; pending[u] == 0 {
				ready.push(u)
			}
		}
	}
	if len(order) < n {
		return nil, &CycleError{Cycles: ix.cycles()}
	}
	return order, nil
}

// minHeap is a binary min-heap of ints. Hand-rolled rather than
// container/heap so that pushing and popping does not box every int.
type minHeap []int

func (h *minHeap) push(v int) {
	*h = append(*h, v)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *minHeap) pop() int {
	a := *h
	top, last := a[0], len(a)-1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= last {
			break
		}
		if c+1 < last && a[c+1] < a[c] {
			c++
		}
		if a[i] <= a[c] {
			break
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
	*h = a
	return top
}
