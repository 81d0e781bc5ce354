package graph

import (
	"slices"
	"strings"
	"testing"
)

func TestBasics(t *testing.T) {
	g := New()
	g.AddNode("a")
	g.AddNode("a")
	g.DependOn("b", "a")
	g.DependOn("b", "a")
	g.DependOn("c", "a")
	g.DependOn("c", "b")
	if g.Len() != 3 || g.EdgeCount() != 3 {
		t.Fatalf("Len %d EdgeCount %d, want 3 3", g.Len(), g.EdgeCount())
	}
	if !g.Has("a") || g.Has("z") {
		t.Fatal("Has wrong")
	}
	checkStrings(t, "Nodes", g.Nodes(), "a b c")
	checkStrings(t, "Deps(c)", g.Deps("c"), "a b")
	checkStrings(t, "Deps(a)", g.Deps("a"), "")
	checkStrings(t, "Dependents(a)", g.Dependents("a"), "b c")
	checkStrings(t, "Deps(missing)", g.Deps("zz"), "")

	var zero Graph
	zero.DependOn("x", "y")
	if zero.Len() != 2 || zero.EdgeCount() != 1 {
		t.Fatal("zero Graph not usable")
	}
	if (&Graph{}).Len() != 0 || (&Graph{}).Nodes() != nil {
		t.Fatal("empty zero Graph")
	}
}

func TestReverse(t *testing.T) {
	g := build("b>a c>b c>a lonely")
	r := g.Reverse()
	checkStrings(t, "Nodes", r.Nodes(), "a b c lonely")
	if r.EdgeCount() != g.EdgeCount() {
		t.Fatalf("EdgeCount %d, want %d", r.EdgeCount(), g.EdgeCount())
	}
	for _, e := range edges(g) {
		if !hasEdge(r, e.To, e.From) {
			t.Errorf("missing flipped edge %v", e)
		}
	}
	if !hasEdge(g, "b", "a") || hasEdge(g, "a", "b") {
		t.Fatal("Reverse mutated the original")
	}
}

func TestSubgraph(t *testing.T) {
	g := build("b>a c>b c>a d>c")
	s := g.Subgraph(func(id string) bool { return id != "b" })
	checkStrings(t, "Nodes", s.Nodes(), "a c d")
	if got := edges(s); !slices.Equal(got, []Edge{{"c", "a"}, {"d", "c"}}) {
		t.Fatalf("edges %v", got)
	}
	if g.Len() != 4 || g.EdgeCount() != 4 {
		t.Fatal("Subgraph mutated the original")
	}
}

func checkStrings(t *testing.T, what string, got []string, want string) {
	t.Helper()
	if w := strings.Fields(want); !slices.Equal(got, w) {
		t.Errorf("%s = %q, want %q", what, got, w)
	}
}
