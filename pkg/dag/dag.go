// Package dag turns a platform spec into its dependency graph: one node per
// app, one join node per stack. Stack-level dependsOn goes through the join
// ("every app of the stack is Healthy"), so a dependency between two stacks
// of n and m apps costs n + m edges, not n × m.
package dag

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/graph"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Kind says what a node is.
type Kind int

const (
	// App is an Argo CD Application: a sync-and-wait task.
	App Kind = iota
	// Stack is a stack's join node: done when all its apps are.
	Stack
)

// Node is one vertex of the platform DAG.
type Node struct {
	Name  string
	Kind  Kind
	Stack string    // the stack an app belongs to; a join's own stack
	App   *spec.App // nil for joins
}

// DAG is the platform's dependency graph. Edge n → d means n waits for d.
type DAG struct {
	Platform *spec.Platform
	Graph    *graph.Graph
	nodes    map[string]*Node
	stacks   map[string][]string // stack → its apps, in spec order
	// origin is the spec field that declared each edge, for located errors.
	origin map[graph.Edge]string
	doc    *spec.Document
}

// Build makes the DAG of a loaded document and rejects cycles, reporting
// each as its path with the line of every edge on it.
func Build(doc *spec.Document) (*DAG, error) {
	d := build(doc)
	if errs := d.cycleErrors(); len(errs) > 0 {
		return nil, errs.OrNil()
	}
	return d, nil
}

// build makes the graph of whatever parsed: on a document with errors it
// leaves out nameless nodes, the second declaration of a name, edges to
// names that are not of the kind dependsOn wants and self-dependencies
// (each already reported), so the cycles it finds are real ones. A valid
// document has none of these.
func build(doc *spec.Document) *DAG {
	p := doc.Platform
	d := &DAG{
		Platform: p,
		Graph:    graph.New(),
		nodes:    map[string]*Node{},
		stacks:   map[string][]string{},
		origin:   map[graph.Edge]string{},
		doc:      doc,
	}
	edge := func(from, to, path string) {
		d.Graph.DependOn(from, to)
		e := graph.Edge{From: from, To: to}
		if _, ok := d.origin[e]; !ok {
			d.origin[e] = path
		}
	}
	// Declare first, so an edge can tell a name from a typo.
	kind := map[string]Kind{}
	declared := func(name string, k Kind) bool {
		if _, dup := kind[name]; dup || name == "" {
			return false
		}
		kind[name] = k
		return true
	}
	own := make([][]bool, len(p.Spec.Stacks)) // own[i][j]: app j of stack i holds its name
	ownStack := make([]bool, len(p.Spec.Stacks))
	for i := range p.Spec.Stacks {
		s := &p.Spec.Stacks[i]
		ownStack[i] = declared(s.Name, Stack)
		own[i] = make([]bool, len(s.Apps))
		for j := range s.Apps {
			own[i][j] = declared(s.Apps[j].Name, App)
		}
	}
	is := func(name string, k Kind) bool {
		got, ok := kind[name]
		return ok && got == k
	}
	for i := range p.Spec.Stacks {
		s := &p.Spec.Stacks[i]
		if !ownStack[i] {
			continue
		}
		d.nodes[s.Name] = &Node{Name: s.Name, Kind: Stack, Stack: s.Name}
		d.Graph.AddNode(s.Name)
		for j := range s.Apps {
			a := &s.Apps[j]
			if !own[i][j] {
				continue
			}
			d.nodes[a.Name] = &Node{Name: a.Name, Kind: App, Stack: s.Name, App: a}
			d.stacks[s.Name] = append(d.stacks[s.Name], a.Name)
			ap := fmt.Sprintf("spec.stacks[%d].apps[%d]", i, j)
			edge(s.Name, a.Name, ap+".name")
			for k, dep := range a.DependsOn {
				if is(dep, App) && dep != a.Name { // a self-dependency is reported as such
					edge(a.Name, dep, fmt.Sprintf("%s.dependsOn[%d]", ap, k))
				}
			}
			for k, dep := range s.DependsOn {
				if is(dep, Stack) && dep != s.Name {
					edge(a.Name, dep, fmt.Sprintf("spec.stacks[%d].dependsOn[%d]", i, k))
				}
			}
		}
	}
	return d
}

// cycleErrors reports every cycle as its path.
func (d *DAG) cycleErrors() spec.Errors {
	var errs spec.Errors
	for _, c := range d.Graph.Cycles() {
		errs = append(errs, d.cycleError(c))
	}
	return errs
}

// cycleError locates a cycle at its first user-written edge and lists the
// line of every edge, so the reader can pick the one to cut.
func (d *DAG) cycleError(c []string) spec.FieldError {
	names := make([]string, 0, len(c)+1)
	var where []string
	first := ""
	for i, n := range c {
		next := c[(i+1)%len(c)]
		names = append(names, d.Label(n))
		path := d.origin[graph.Edge{From: n, To: next}]
		if first == "" && !strings.HasSuffix(path, ".name") {
			first = path
		}
		where = append(where, fmt.Sprintf("%s → %s: %s", d.Label(n), d.Label(next), d.explain(path)))
	}
	names = append(names, d.Label(c[0]))
	fe := d.doc.At(first, "dependency cycle %s", strings.Join(names, " → "))
	fe.Msg += " (" + strings.Join(where, "; ") + ")"
	return fe
}

// explain says where an edge comes from, in the reader's terms.
func (d *DAG) explain(path string) string {
	if strings.HasSuffix(path, ".name") {
		return fmt.Sprintf("stack membership, line %d", d.doc.Line(path))
	}
	return fmt.Sprintf("line %d", d.doc.Line(path))
}

// Label is how a node is shown to people: joins are marked as stacks.
func (d *DAG) Label(name string) string {
	if n := d.nodes[name]; n != nil && n.Kind == Stack {
		return "stack " + name
	}
	return name
}

// Node returns a node by name, or nil.
func (d *DAG) Node(name string) *Node { return d.nodes[name] }

// Apps lists the app nodes present in this DAG, sorted.
func (d *DAG) Apps() []string { return d.ofKind(App) }

// Stacks lists the join nodes present in this DAG, sorted.
func (d *DAG) Stacks() []string { return d.ofKind(Stack) }

func (d *DAG) ofKind(k Kind) []string {
	var out []string
	for _, n := range d.Graph.Nodes() {
		if d.nodes[n].Kind == k {
			out = append(out, n)
		}
	}
	return out
}

// StackApps lists a stack's apps present in this DAG, sorted: the order
// of the spec file carries no meaning.
func (d *DAG) StackApps(stack string) []string {
	var out []string
	for _, a := range d.stacks[stack] {
		if d.Graph.Has(a) {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// StackDeps lists the stacks a stack depends on that are in this DAG, sorted.
func (d *DAG) StackDeps(stack string) []string {
	var out []string
	for _, s := range d.Platform.Spec.Stacks {
		if s.Name != stack {
			continue
		}
		for _, dep := range s.DependsOn {
			if d.Graph.Has(dep) {
				out = append(out, dep)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Origin is the spec field path that declared an edge ("" for none).
func (d *DAG) Origin(e graph.Edge) string { return d.origin[e] }

// Doc is the document the DAG was built from.
func (d *DAG) Doc() *spec.Document { return d.doc }

// Load reads a spec file (at most readlimit.Spec bytes) and builds its
// DAG: every check the product runs before generating anything.
func Load(path string) (*DAG, error) {
	doc, err := spec.ReadPartial(path)
	return finish(doc, err)
}

// Parse checks data (named file in errors) and builds its DAG, as Load.
func Parse(file string, data []byte) (*DAG, error) {
	return finish(spec.LoadPartial(file, data))
}

// ParseWith is Parse with another file's overrides applied as the spec is
// loaded (spec.Override): they meet the spec's rules, located in that file.
func ParseWith(file string, data []byte, over []spec.Override) (*DAG, error) {
	return finish(spec.LoadPartialWith(file, data, over))
}

// finish builds the DAG of a loaded document. When the document has
// errors, the graph of what parsed is still checked for cycles, so one
// pass reports a missing field, an unknown dependency and a cycle.
func finish(doc *spec.Document, err error) (*DAG, error) {
	if err == nil {
		return Build(doc)
	}
	errs, ok := err.(spec.Errors)
	if doc == nil || !ok {
		return nil, err
	}
	return nil, append(errs, build(doc).cycleErrors()...).OrNil()
}
