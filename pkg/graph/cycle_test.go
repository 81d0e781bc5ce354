package graph

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestCycles(t *testing.T) {
	tests := []struct {
		name, graph string
		want        string // cycles separated by " | "
	}{
		{"dag", "b>a c>b c>a", ""},
		{"triangle", "a>b b>c c>a", "a b c"},
		{"self-loop", "a>a b>a", "a"},
		{"two-node", "x>a a>b b>a", "a b"},
		// Shortest way back: a→b→a, not a→b→c→a.
		{"shortcut home", "a>b b>c c>a b>a", "a b"},
		// First hop is the smallest successor even when a longer way back.
		{"first hop", "a>b a>d b>c c>a d>a", "a b c"},
		// A self-loop on the start must not hide the rest of the component.
		{"self-loop in scc", "a>a a>b b>a", "a b"},
		{"two sccs", "x>a a>b b>a b>c c>d d>c", "a b | c d"},
		{"smallest return step", "a>b b>d b>c c>a d>a", "a b c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parts []string
			for _, c := range build(tt.graph).Cycles() {
				parts = append(parts, strings.Join(c, " "))
			}
			if got := strings.Join(parts, " | "); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCycleErrorMessage(t *testing.T) {
	err := &CycleError{Cycles: [][]string{{"a", "b", "c"}, {"d"}}}
	if want := "dependency cycle: a → b → c → a; d → d"; err.Error() != want {
		t.Fatalf("got %q, want %q", err.Error(), want)
	}
}

// TestCyclesProperties checks on random graphs, against brute-force
// strongly connected components, that there is exactly one cycle per
// cyclic component, starting at its smallest name, made of real edges and
// never repeating a node; and none at all on DAGs.
func TestCyclesProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for iter := 0; iter < 400; iter++ {
		n := 1 + rng.Intn(30)
		g := randomGraph(rng, n, rng.Intn(2*n))
		reach := allReach(g)
		sameSCC := func(a, b string) bool { return a == b || reach[a][b] && reach[b][a] }

		// Brute force: the smallest node of every cyclic component.
		var wantStarts []string
		for _, v := range g.Nodes() {
			if !reach[v][v] {
				continue // on no cycle
			}
			smallest := true
			for u := range reach[v] {
				if u < v && sameSCC(u, v) {
					smallest = false
				}
			}
			if smallest {
				wantStarts = append(wantStarts, v)
			}
		}

		cycles := g.Cycles()
		var starts []string
		for _, c := range cycles {
			starts = append(starts, c[0])
			seen := map[string]bool{}
			for i, v := range c {
				if seen[v] {
					t.Fatalf("cycle %v repeats %s", c, v)
				}
				seen[v] = true
				if next := c[(i+1)%len(c)]; !hasEdge(g, v, next) {
					t.Fatalf("cycle %v: no edge %s→%s", c, v, next)
				}
				if !sameSCC(v, c[0]) {
					t.Fatalf("cycle %v leaves the component of %s", c, c[0])
				}
			}
		}
		if !slices.Equal(starts, wantStarts) {
			t.Fatalf("cycles start at %v, want %v", starts, wantStarts)
		}

		_, err := g.TopoOrder()
		var ce *CycleError
		if (err != nil) != (len(cycles) > 0) {
			t.Fatalf("TopoOrder error %v with %d cycles", err, len(cycles))
		}
		if err != nil && (!errors.As(err, &ce) || !slices.EqualFunc(ce.Cycles, cycles, slices.Equal[[]string])) {
			t.Fatalf("CycleError %v, want cycles %v", err, cycles)
		}
	}
	for iter := 0; iter < 100; iter++ {
		n := 1 + rng.Intn(40)
		if c := randomDAG(rng, n, rng.Intn(4*n)).Cycles(); c != nil {
			t.Fatalf("DAG has cycles %v", c)
		}
	}
}

// TestCyclesLongChain would break a recursive SCC on a long cycle.
func TestCyclesLongChain(t *testing.T) {
	g := New()
	const n = 10_000
	for i := 0; i < n; i++ {
		g.DependOn(name(i), name((i+1)%n))
	}
	c := g.Cycles()
	if len(c) != 1 || len(c[0]) != n {
		t.Fatalf("got %d cycles, want one of %d nodes", len(c), n)
	}
}

func name(i int) string { return fmt.Sprintf("n%06d", i) }
