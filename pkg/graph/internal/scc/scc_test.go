package scc

import (
	"math/rand"
	"slices"
	"testing"
)

func TestTarjan(t *testing.T) {
	tests := []struct {
		name string
		adj  [][]int
		want [][]int // each component sorted, components sorted by first node
	}{
		{"empty", nil, nil},
		{"single", [][]int{{}}, [][]int{{0}}},
		{"self-loop", [][]int{{0}}, [][]int{{0}}},
		{"chain", [][]int{{1}, {2}, {}}, [][]int{{0}, {1}, {2}}},
		{"triangle", [][]int{{1}, {2}, {0}}, [][]int{{0, 1, 2}}},
		{"two cycles joined", [][]int{{1}, {0, 2}, {3}, {2}}, [][]int{{0, 1}, {2, 3}}},
		{"figure eight", [][]int{{1, 2}, {0}, {0}, {}}, [][]int{{0, 1, 2}, {3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := normalize(Tarjan(tt.adj))
			if !slices.EqualFunc(got, tt.want, slices.Equal[[]int]) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTarjanMatchesReachability checks on random graphs that two nodes share
// a component exactly when each reaches the other.
func TestTarjanMatchesReachability(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 200; iter++ {
		n := 1 + rng.Intn(12)
		adj := make([][]int, n)
		for e := rng.Intn(3 * n); e > 0; e-- {
			u, v := rng.Intn(n), rng.Intn(n)
			adj[u] = append(adj[u], v)
		}
		reach := closure(adj)
		comp := make([]int, n)
		seen := 0
		for ci, c := range Tarjan(adj) {
			for _, v := range c {
				comp[v] = ci
				seen++
			}
		}
		if seen != n {
			t.Fatalf("adj %v: %d nodes in components, want %d", adj, seen, n)
		}
		for u := 0; u < n; u++ {
			for v := 0; v < n; v++ {
				same := u == v || reach[u][v] && reach[v][u]
				if same != (comp[u] == comp[v]) {
					t.Fatalf("adj %v: nodes %d,%d mutual reach %v, same component %v", adj, u, v, same, comp[u] == comp[v])
				}
			}
		}
	}
}

// TestTarjanDeepChain would overflow a recursive implementation's budget
// long before it strains this one.
func TestTarjanDeepChain(t *testing.T) {
	const n = 200_000
	adj := make([][]int, n)
	for i := 0; i < n-1; i++ {
		adj[i] = []int{i + 1}
	}
	adj[n-1] = []int{0}
	if comps := Tarjan(adj); len(comps) != 1 || len(comps[0]) != n {
		t.Fatalf("got %d components, want one of %d", len(comps), n)
	}
}

func normalize(comps [][]int) [][]int {
	var out [][]int
	for _, c := range comps {
		c = slices.Clone(c)
		slices.Sort(c)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

func closure(adj [][]int) [][]bool {
	n := len(adj)
	reach := make([][]bool, n)
	for s := range reach {
		reach[s] = make([]bool, n)
		queue := []int{s}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for _, v := range adj[u] {
				if !reach[s][v] {
					reach[s][v] = true
					queue = append(queue, v)
				}
			}
		}
	}
	return reach
}
