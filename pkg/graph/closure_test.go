package graph

import (
	"math/rand"
	"slices"
	"sort"
	"testing"
)

func TestClosures(t *testing.T) {
	g := build("b>a c>b d>a e>d x")
	checkStrings(t, "DepsClosure(c)", g.DepsClosure("c"), "a b c")
	checkStrings(t, "DepsClosure(c,e,c)", g.DepsClosure("c", "e", "c"), "a b c d e")
	checkStrings(t, "DepsClosure(missing)", g.DepsClosure("zz", "x"), "x")
	checkStrings(t, "DepsClosure()", g.DepsClosure(), "")
	checkStrings(t, "DependentsClosure(a)", g.DependentsClosure("a"), "a b c d e")
	checkStrings(t, "DependentsClosure(d)", g.DependentsClosure("d"), "d e")
	checkStrings(t, "cyclic", build("a>b b>a c>a").DepsClosure("c"), "a b c")
}

func TestClosuresMatchBFS(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.Intn(40)
		var g *Graph
		if iter%2 == 0 {
			g = randomDAG(rng, n, rng.Intn(4*n))
		} else {
			g = randomGraph(rng, n, rng.Intn(2*n))
		}
		nodes := g.Nodes()
		var seeds []string
		for k := rng.Intn(4); k > 0; k-- {
			seeds = append(seeds, nodes[rng.Intn(n)])
		}
		for _, dir := range []struct {
			name    string
			closure func(...string) []string
			next    func(string) []string
		}{
			{"DepsClosure", g.DepsClosure, g.Deps},
			{"DependentsClosure", g.DependentsClosure, g.Dependents},
		} {
			set := map[string]bool{}
			for _, s := range seeds {
				set[s] = true
				for v := range reachable(s, dir.next) {
					set[v] = true
				}
			}
			want := make([]string, 0, len(set))
			for v := range set {
				want = append(want, v)
			}
			sort.Strings(want)
			if got := dir.closure(seeds...); !slices.Equal(got, want) {
				t.Fatalf("%s(%v) = %v, want %v", dir.name, seeds, got, want)
			}
		}
	}
}
