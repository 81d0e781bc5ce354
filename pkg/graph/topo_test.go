package graph

import (
	"errors"
	"math/rand"
	"slices"
	"testing"
	"time"
)

func TestTopoOrder(t *testing.T) {
	tests := []struct {
		graph, want string
	}{
		{"", ""},
		{"a", "a"},
		{"b>a c>a", "a b c"},
		{"a>z b>z", "z a b"},
		{"a>b a>c c>b d", "b c a d"}, // d is ready from the start but a < d
		{"c>b b>a", "a b c"},
	}
	for _, tt := range tests {
		got, err := build(tt.graph).TopoOrder()
		if err != nil {
			t.Fatalf("%q: %v", tt.graph, err)
		}
		checkStrings(t, tt.graph, got, tt.want)
	}
}

func TestTopoOrderCycle(t *testing.T) {
	g := build("x>a a>b b>a c>c")
	order, err := g.TopoOrder()
	var ce *CycleError
	if !errors.As(err, &ce) || order != nil {
		t.Fatalf("got %v, %v; want nil, *CycleError", order, err)
	}
	if want := "dependency cycle: a → b → a; c → c"; err.Error() != want {
		t.Fatalf("Error() = %q, want %q", err, want)
	}
	if _, err := g.Layers(); !errors.As(err, &ce) {
		t.Fatalf("Layers: %v, want *CycleError", err)
	}
	if _, _, err := g.CriticalPath(func(string) time.Duration { return 1 }); !errors.As(err, &ce) {
		t.Fatalf("CriticalPath: %v, want *CycleError", err)
	}
}

// TestTopoOrderProperties checks on random DAGs that the order lists every
// node once, respects every edge, takes the smallest ready name at each
// step, and that the reversed graph's order is a valid teardown order.
func TestTopoOrderProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.Intn(40)
		g := randomDAG(rng, n, rng.Intn(4*n))
		order, err := g.TopoOrder()
		if err != nil {
			t.Fatal(err)
		}
		if len(order) != g.Len() {
			t.Fatalf("order has %d nodes, want %d", len(order), g.Len())
		}
		pos := positions(order)
		for _, e := range edges(g) {
			if pos[e.To] >= pos[e.From] {
				t.Fatalf("%s depends on %s but comes first in %v", e.From, e.To, order)
			}
		}
		// Brute-force Kahn: the next node must be the smallest whose deps
		// are all placed.
		placed := map[string]bool{}
		for _, v := range order {
			for _, c := range g.Nodes() {
				if placed[c] || c >= v {
					continue
				}
				if ready(g, c, placed) {
					t.Fatalf("chose %s while smaller %s was ready", v, c)
				}
			}
			placed[v] = true
		}

		teardown, err := g.Reverse().TopoOrder()
		if err != nil {
			t.Fatal(err)
		}
		tpos := positions(teardown)
		for _, e := range edges(g) {
			if tpos[e.From] >= tpos[e.To] {
				t.Fatalf("teardown removes %s before its dependent %s", e.To, e.From)
			}
		}
	}
}

func TestTopoOrderDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	g := randomDAG(rng, 200, 600)
	want, _ := g.TopoOrder()
	// Rebuild with edges inserted in another order.
	es := edges(g)
	rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	h := New()
	for _, n := range g.Nodes() {
		h.AddNode(n)
	}
	for _, e := range es {
		h.DependOn(e.From, e.To)
	}
	got, _ := h.TopoOrder()
	if !slices.Equal(got, want) {
		t.Fatal("TopoOrder depends on insertion order")
	}
}

func positions(order []string) map[string]int {
	pos := make(map[string]int, len(order))
	for i, v := range order {
		pos[v] = i
	}
	return pos
}

func ready(g *Graph, n string, placed map[string]bool) bool {
	for _, d := range g.Deps(n) {
		if !placed[d] {
			return false
		}
	}
	return true
}
