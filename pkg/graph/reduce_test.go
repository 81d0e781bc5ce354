package graph

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

func TestRedundantEdges(t *testing.T) {
	tests := []struct {
		name, graph string
		want        []Edge
	}{
		{"none", "b>a c>b", nil},
		{"triangle", "b>a c>b c>a", []Edge{{"c", "a"}}},
		{"long way round", "e>d d>c c>b b>a e>a e>b", []Edge{{"e", "a"}, {"e", "b"}}},
		{"diamond keeps both sides", "b>a c>a d>b d>c", nil},
		{"cyclic", "a>b b>a c>a c>b", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(tt.graph)
			before := g.EdgeCount()
			if got := g.RedundantEdges(); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if g.EdgeCount() != before {
				t.Fatal("RedundantEdges mutated the graph")
			}
		})
	}
}

// TestRedundantEdgesProperties checks on random DAGs that the result is
// exactly the edges a brute force calls redundant, and that dropping them
// leaves reachability unchanged.
func TestRedundantEdgesProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.Intn(30)
		g := randomDAG(rng, n, rng.Intn(4*n))
		reach := allReach(g)
		var want []Edge
		for _, e := range edges(g) {
			for _, other := range g.Deps(e.From) {
				if other != e.To && reach[other][e.To] {
					want = append(want, e)
					break
				}
			}
		}
		got := g.RedundantEdges()
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}

		drop := map[Edge]bool{}
		for _, e := range got {
			drop[e] = true
		}
		reduced := New()
		for _, v := range g.Nodes() {
			reduced.AddNode(v)
		}
		for _, e := range edges(g) {
			if !drop[e] {
				reduced.DependOn(e.From, e.To)
			}
		}
		if !reflect.DeepEqual(allReach(reduced), reach) {
			t.Fatal("removing redundant edges changed reachability")
		}
		if r := reduced.RedundantEdges(); r != nil {
			t.Fatalf("reduced graph still has redundant edges %v", r)
		}
	}
}
