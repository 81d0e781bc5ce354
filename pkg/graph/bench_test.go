package graph

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// benchSizes are random DAGs with about three edges per node; the last is
// the 10k-node / 50k-edge scale the package must handle comfortably.
var benchSizes = []struct{ nodes, edges int }{
	{45, 135}, {500, 1500}, {5000, 15000}, {10000, 50000},
}

func BenchmarkGraph(b *testing.B) {
	unit := func(string) time.Duration { return time.Second }
	ops := []struct {
		name string
		run  func(*Graph)
	}{
		{"TopoOrder", func(g *Graph) { mustOK(b, g.TopoOrder) }},
		{"Layers", func(g *Graph) { mustOK(b, g.Layers) }},
		{"CriticalPath", func(g *Graph) {
			if _, _, err := g.CriticalPath(unit); err != nil {
				b.Fatal(err)
			}
		}},
		{"RedundantEdges", func(g *Graph) { g.RedundantEdges() }},
		{"Cycles", func(g *Graph) { g.Cycles() }},
	}
	for _, size := range benchSizes {
		g := randomDAG(rand.New(rand.NewSource(1)), size.nodes, size.edges)
		for _, op := range ops {
			b.Run(fmt.Sprintf("%s/V=%d,E=%d", op.name, g.Len(), g.EdgeCount()), func(b *testing.B) {
				for b.Loop() {
					op.run(g)
				}
			})
		}
	}
}

func mustOK[T any](b *testing.B, f func() (T, error)) {
	if _, err := f(); err != nil {
		b.Fatal(err)
	}
}

// TestLargeGraph runs every operation once at the 10k / 50k scale and checks
// the results are consistent; the benchmarks say how fast.
func TestLargeGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("large graph")
	}
	g := randomDAG(rand.New(rand.NewSource(2)), 10_000, 50_000)
	order, err := g.TopoOrder()
	if err != nil || len(order) != g.Len() {
		t.Fatalf("TopoOrder: %d nodes, %v", len(order), err)
	}
	layers, err := g.Layers()
	if err != nil {
		t.Fatal(err)
	}
	path, makespan, err := g.CriticalPath(func(string) time.Duration { return 1 })
	if err != nil || int(makespan) != len(layers) || len(path) != len(layers) {
		t.Fatalf("critical path %d nodes, makespan %d, %d layers, %v", len(path), makespan, len(layers), err)
	}
	if c := g.Cycles(); c != nil {
		t.Fatalf("cycles in a DAG: %d", len(c))
	}
	if r := g.RedundantEdges(); len(r) >= g.EdgeCount() {
		t.Fatalf("%d redundant edges of %d", len(r), g.EdgeCount())
	}
	if n := len(g.DepsClosure(order[len(order)-1])); n < 2 {
		t.Fatalf("closure of the last node has %d nodes", n)
	}
}
