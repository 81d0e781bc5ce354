package dag

import (
	"fmt"
	"strings"

	"github.com/deployctl/deployctl/pkg/graph"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Redundant returns a warning for every user-written dependsOn entry that
// another path already implies (the transitive reduction). The edges stay
// in the spec's meaning: a warning is advice to prune, never a rewrite.
//
// A stack-level dependsOn expands to one edge per app of the stack; it is
// reported only when it is redundant for every one of them, since only then
// can it be removed.
func (d *DAG) Redundant() spec.Errors {
	redundant := map[graph.Edge]bool{}
	for _, e := range d.Graph.RedundantEdges() {
		redundant[e] = true
	}
	needed := map[string]bool{} // origin paths with at least one necessary edge
	for e, path := range d.origin {
		if !redundant[e] {
			needed[path] = true
		}
	}
	var out spec.Errors
	reported := map[string]bool{}
	for _, e := range d.Graph.RedundantEdges() {
		path := d.origin[e]
		if path == "" || strings.HasSuffix(path, ".name") || needed[path] || reported[path] {
			continue // stack membership is structure, not something to prune
		}
		reported[path] = true
		from := d.Label(e.From)
		if strings.Contains(path, "].dependsOn[") && !strings.Contains(path, ".apps[") {
			from = "stack " + d.nodes[e.From].Stack
		}
		out = append(out, d.doc.At(path, "redundant dependency %s → %s: already implied by %s", from, d.Label(e.To), d.labels(d.pathAvoiding(e))))
	}
	return out
}

// pathAvoiding finds the shortest path From → … → To that does not use the
// direct edge, to show why the edge is implied. Breadth-first over sorted
// neighbours, so the answer is deterministic.
func (d *DAG) pathAvoiding(e graph.Edge) []string {
	prev := map[string]string{e.From: ""}
	queue := []string{e.From}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range d.Graph.Deps(n) {
			if n == e.From && m == e.To {
				continue
			}
			if _, seen := prev[m]; seen {
				continue
			}
			prev[m] = n
			if m == e.To {
				var path []string
				for x := m; x != ""; x = prev[x] {
					path = append([]string{x}, path...)
				}
				return path
			}
			queue = append(queue, m)
		}
	}
	return nil
}

func (d *DAG) labels(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = d.Label(n)
	}
	if len(out) == 0 {
		return fmt.Sprintf("(no path: %v)", names)
	}
	return strings.Join(out, " → ")
}
