package graph

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestLayers(t *testing.T) {
	tests := []struct {
		graph string
		want  string // layers separated by " | "
	}{
		{"", ""},
		{"a b", "a b"},
		{"b>a c>b", "a | b | c"},
		// d depends on a (layer 0) and c (layer 2): longest path wins.
		{"b>a c>b d>a d>c e", "a e | b | c | d"},
		{"z>y z>x y>x w>x", "x | w y | z"},
	}
	for _, tt := range tests {
		got, err := build(tt.graph).Layers()
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, l := range got {
			parts = append(parts, strings.Join(l, " "))
		}
		if s := strings.Join(parts, " | "); s != tt.want {
			t.Errorf("%q: got %q, want %q", tt.graph, s, tt.want)
		}
	}
}

func TestLayersProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.Intn(50)
		g := randomDAG(rng, n, rng.Intn(4*n))
		layers, err := g.Layers()
		if err != nil {
			t.Fatal(err)
		}
		layerOf := map[string]int{}
		for i, l := range layers {
			if len(l) == 0 || !slices.IsSorted(l) {
				t.Fatalf("layer %d = %v: empty or unsorted", i, l)
			}
			for _, v := range l {
				layerOf[v] = i
			}
		}
		if len(layerOf) != g.Len() {
			t.Fatalf("%d nodes in layers, want %d", len(layerOf), g.Len())
		}
		for _, v := range g.Nodes() {
			want := 0
			for _, d := range g.Deps(v) {
				want = max(want, layerOf[d]+1)
			}
			if layerOf[v] != want {
				t.Fatalf("%s in layer %d, want %d", v, layerOf[v], want)
			}
		}
	}
}
