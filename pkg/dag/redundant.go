package dag

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/graph"
	"github.com/deployctl/deployctl/pkg/spec"
)

// MaxWarnings caps the redundant-dependency warnings Redundant lists; the
// rest are counted in one last warning. A dense graph can have tens of
// thousands, and nobody reads past the first screen.
const MaxWarnings = 50

// Redundant returns a warning for every user-written dependsOn entry that
// another path already implies (the transitive reduction), the first
// MaxWarnings in file order, then one warning counting the rest. The edges
// stay in the spec's meaning: a warning is advice to prune, never a rewrite.
//
// A stack-level dependsOn expands to one edge per app of the stack; it is
// reported only when it is redundant for every one of them, since only then
// can it be removed.
//
// Cost: the reduction is O(V·E/64) (graph.RedundantEdges); the path shown
// for each listed warning is one breadth-first search, O(V+E), done for the
// listed ones only.
func (d *DAG) Redundant() spec.Errors {
	edges := d.Graph.RedundantEdges()
	redundant := make(map[graph.Edge]bool, len(edges))
	for _, e := range edges {
		redundant[e] = true
	}
	needed := map[string]bool{} // origin paths with at least one necessary edge
	for e, path := range d.origin {
		if !redundant[e] {
			needed[path] = true
		}
	}
	type found struct {
		edge graph.Edge
		path string
		line int
	}
	var list []found
	reported := map[string]bool{}
	for _, e := range edges {
		path := d.origin[e]
		if path == "" || strings.HasSuffix(path, ".name") || needed[path] || reported[path] {
			continue // stack membership is structure, not something to prune
		}
		reported[path] = true
		list = append(list, found{e, path, d.doc.Line(path)})
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].line != list[j].line {
			return list[i].line < list[j].line
		}
		return list[i].path < list[j].path
	})
	var out spec.Errors
	for _, f := range list[:min(len(list), MaxWarnings)] {
		e, path := f.edge, f.path
		from := d.Label(e.From)
		if strings.Contains(path, "].dependsOn[") && !strings.Contains(path, ".apps[") {
			from = "stack " + d.nodes[e.From].Stack
		}
		out = append(out, d.doc.At(path, "redundant dependency %s → %s: already implied by %s", from, d.Label(e.To), d.labels(d.pathAvoiding(e))))
	}
	if rest := len(list) - MaxWarnings; rest > 0 {
		out = append(out, spec.FieldError{File: d.doc.File, Msg: fmt.Sprintf("%d more redundant dependencies not listed (the first %d are)", rest, MaxWarnings)})
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
