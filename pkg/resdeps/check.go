package resdeps

import (
	"fmt"
	"slices"
	"sort"

	"github.com/deployctl/deployctl/pkg/dag"
)

// Declared is one dependsOn entry of a spec, held against the inventory.
type Declared struct {
	From, To string
	Stack    bool   // a stack's dependsOn, else an app's
	Origin   string // its field in the spec, for messages
	// Evidence are the inferred edges it orders: from one of From's apps
	// to one of To's. None: nothing the apps deploy needs it.
	Evidence []Edge
	// Through, when there is no Evidence, are the inferred edges it
	// orders only by way of what To waits for (grafana → ceph-storageclasses
	// through a stack that waits for the storage stack): deleting the entry
	// by hand would leave them unordered.
	Through []Edge
	// Unchecked are the apps on either side with no inventory: what they
	// need or provide is unknown, so the entry is neither supported nor not.
	Unchecked []string
}

// Supported says whether a resource needs the entry.
func (d Declared) Supported() bool { return len(d.Evidence) > 0 }

// Comparison is a spec's DAG held against inferred dependencies.
type Comparison struct {
	Declared []Declared // in spec order
	// Missing are inferred edges the DAG does not order, not even through
	// other entries: the deploy may start the consumer before what it needs.
	Missing []Edge
}

// Compare holds d's dependsOn entries against r. known are the apps that
// had an inventory (others are neither checked nor trusted).
func Compare(d *dag.DAG, r *Result, known map[string]bool) *Comparison {
	c := &Comparison{}
	closures := map[string][]string{}
	waitsFor := func(name string) []string {
		cl, ok := closures[name]
		if !ok {
			cl = d.Graph.DepsClosure(name)
			closures[name] = cl
		}
		return cl
	}
	members := func(name string, stack bool) []string {
		if stack {
			return d.StackApps(name)
		}
		return []string{name}
	}
	for i, s := range d.Platform.Spec.Stacks {
		for k, dep := range s.DependsOn {
			c.Declared = append(c.Declared, declared(r, known, s.Name, dep, true, members(s.Name, true), members(dep, true),
				waitsFor(dep), fieldPath(i, -1, k)))
		}
		for j, a := range s.Apps {
			for k, dep := range a.DependsOn {
				c.Declared = append(c.Declared, declared(r, known, a.Name, dep, false, []string{a.Name}, []string{dep},
					waitsFor(dep), fieldPath(i, j, k)))
			}
		}
	}
	c.Missing = Uncovered(d, r.Edges)
	return c
}

// Uncovered are the edges whose provider the consumer does not wait for in
// d, directly or through other dependencies. Closures are taken from the
// providers (few: the operators) rather than the consumers (every app).
func Uncovered(d *dag.DAG, edges []Edge) []Edge {
	var out []Edge
	waiting := map[string][]string{} // provider → what waits for it, sorted
	for _, e := range edges {
		if !d.Graph.Has(e.From) || !d.Graph.Has(e.To) {
			continue
		}
		w, ok := waiting[e.To]
		if !ok {
			w = d.Graph.DependentsClosure(e.To)
			waiting[e.To] = w
		}
		if _, found := slices.BinarySearch(w, e.From); !found {
			out = append(out, e)
		}
	}
	return out
}

// Cyclic are the edges whose provider waits for its consumer in d: with
// the edge, a cycle.
func Cyclic(d *dag.DAG, edges []Edge) []Edge {
	var out []Edge
	waitsFor := map[string][]string{} // provider → what it waits for, sorted
	for _, e := range edges {
		w, ok := waitsFor[e.To]
		if !ok {
			w = d.Graph.DepsClosure(e.To)
			waitsFor[e.To] = w
		}
		if _, found := slices.BinarySearch(w, e.From); found {
			out = append(out, e)
		}
	}
	return out
}

func fieldPath(stack, app, k int) string {
	if app < 0 {
		return fmt.Sprintf("spec.stacks[%d].dependsOn[%d]", stack, k)
	}
	return fmt.Sprintf("spec.stacks[%d].apps[%d].dependsOn[%d]", stack, app, k)
}

func declared(r *Result, known map[string]bool, from, to string, stack bool, fromApps, toApps, toWaitsFor []string, origin string) Declared {
	d := Declared{From: from, To: to, Stack: stack, Origin: origin}
	unchecked := map[string]bool{}
	for _, a := range append(append([]string(nil), fromApps...), toApps...) {
		if !known[a] {
			unchecked[a] = true
		}
	}
	d.Unchecked = sortedKeys(unchecked)
	d.Evidence = r.Between(fromApps, toApps)
	if len(d.Evidence) == 0 {
		d.Through = r.Between(fromApps, toWaitsFor)
	}
	return d
}

// Between are the edges from one of the apps in from to one in to.
func (r *Result) Between(from, to []string) []Edge {
	isTo := map[string]bool{}
	for _, t := range to {
		isTo[t] = true
	}
	var out []Edge
	for _, f := range from {
		i := sort.Search(len(r.Edges), func(i int) bool { return r.Edges[i].From >= f })
		for ; i < len(r.Edges) && r.Edges[i].From == f; i++ {
			if isTo[r.Edges[i].To] {
				out = append(out, r.Edges[i])
			}
		}
	}
	return out
}
