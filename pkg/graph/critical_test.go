package graph

import (
	"math/rand"
	"slices"
	"testing"
	"time"
)

func TestCriticalPath(t *testing.T) {
	tests := []struct {
		name, graph string
		weights     map[string]time.Duration // missing nodes weigh 1
		want        string
		makespan    time.Duration
	}{
		{"empty", "", nil, "", 0},
		{"single", "a", map[string]time.Duration{"a": 5}, "a", 5},
		{"heavier branch", "b>a c>a d>b d>c", map[string]time.Duration{"c": 9}, "a c d", 11},
		{"tie takes smaller name", "b>a c>a d>b d>c", nil, "a b d", 3},
		{"root tie", "c>a c>b", nil, "a c", 2},
		{"disconnected", "b>a y>x z>y", nil, "x y z", 3},
		{"heavy isolated node", "b>a z", map[string]time.Duration{"z": 10}, "z", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, makespan, err := build(tt.graph).CriticalPath(weights(tt.weights))
			if err != nil {
				t.Fatal(err)
			}
			checkStrings(t, "path", path, tt.want)
			if makespan != tt.makespan {
				t.Errorf("makespan %v, want %v", makespan, tt.makespan)
			}
		})
	}
}

// TestCriticalPathBruteForce enumerates every root-to-sink path of small
// random DAGs and expects the heaviest, smallest by name among equals.
// Weights are tiny so ties are common.
func TestCriticalPathBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.Intn(12)
		g := randomDAG(rng, n, rng.Intn(3*n))
		w := map[string]time.Duration{}
		for _, v := range g.Nodes() {
			w[v] = time.Duration(rng.Intn(4))
		}
		var best []string
		var bestW time.Duration
		var walk func(path []string, sum time.Duration)
		walk = func(path []string, sum time.Duration) {
			v := path[len(path)-1]
			if next := g.Dependents(v); len(next) > 0 {
				for _, u := range next {
					walk(append(path, u), sum+w[u])
				}
				return
			}
			if best == nil || sum > bestW || sum == bestW && slices.Compare(path, best) < 0 {
				best, bestW = slices.Clone(path), sum
			}
		}
		for _, v := range g.Nodes() {
			if len(g.Deps(v)) == 0 {
				walk([]string{v}, w[v])
			}
		}
		path, makespan, err := g.CriticalPath(weights(w))
		if err != nil {
			t.Fatal(err)
		}
		if makespan != bestW || !slices.Equal(path, best) {
			t.Fatalf("got %v (%v), want %v (%v)", path, makespan, best, bestW)
		}
	}
}

func weights(w map[string]time.Duration) func(string) time.Duration {
	return func(id string) time.Duration {
		if d, ok := w[id]; ok {
			return d
		}
		return 1
	}
}
