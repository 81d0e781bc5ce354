// Package plan explains a platform DAG before anything runs: the layers,
// the order, what may run in parallel, the critical path with its worst-case
// duration, and the teardown order.
package plan

import (
	"time"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Plan is what `deployctl plan` prints, in every output format.
type Plan struct {
	Platform string     `json:"platform"`
	Scope    string     `json:"scope"`
	Action   dag.Action `json:"action"`
	// Layers groups apps by depth: an app's layer is the number of apps on
	// the longest dependency chain below it (teardown: the longest chain of
	// dependents above it). Display only: the workflow does not wait for
	// layers, every app starts when its own dependencies are done (teardown:
	// when its dependents are gone).
	Layers [][]string `json:"layers"`
	// Order is one valid sequential order of the apps (ties by name).
	Order []string `json:"order"`
	// CriticalPath is the chain of apps that bounds the makespan, using each
	// app's health timeout as its worst-case duration, in the order the
	// action runs them.
	CriticalPath []string `json:"criticalPath"`
	Makespan     Seconds  `json:"makespanSeconds"`
	// WaveMakespan is what the same apps would take with a barrier between
	// layers (each layer waits for its slowest app): the sync-wave model.
	WaveMakespan Seconds `json:"waveMakespanSeconds"`
	MaxParallel  int     `json:"maxParallel"`
	// Teardown is the deletion order: every app before what it depends on.
	Teardown []string `json:"teardownOrder"`
	Nodes    []Node   `json:"nodes"`
	Stacks   []Stack  `json:"stacks"`
	// StepMode is spec.workflow.stepMode; pod, the default, is left out,
	// so a pod-mode plan reads as before.
	StepMode spec.StepMode `json:"stepMode,omitempty"`
}

// Node is one app of the plan.
type Node struct {
	Name      string   `json:"name"`
	Stack     string   `json:"stack"`
	Layer     int      `json:"layer"`
	Weight    Seconds  `json:"weightSeconds"`
	DependsOn []string `json:"dependsOn,omitempty"`       // direct app dependencies
	Stacks    []string `json:"dependsOnStacks,omitempty"` // direct stack dependencies
}

// Stack is one stack of the plan.
type Stack struct {
	Name      string   `json:"name"`
	Apps      []string `json:"apps"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

// Seconds is a duration that prints as whole seconds in JSON.
type Seconds float64

func secs(d time.Duration) Seconds { return Seconds(d.Seconds()) }

// Duration converts back for text output.
func (s Seconds) Duration() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

// Weight is an app's worst-case duration: its health timeout, which bounds
// how long the node can take once its sync finished.
func Weight(d *dag.DAG, name string) time.Duration {
	n := d.Node(name)
	if n == nil || n.Kind != dag.App || n.App.Timeouts == nil {
		return 0
	}
	return n.App.Timeouts.Health.Duration
}

// Make computes the plan of a (scoped) DAG.
func Make(d *dag.DAG, scope string, action dag.Action) (*Plan, error) {
	if scope == "" {
		scope = "platform"
	}
	g := d.Graph
	// walk is the direction the action runs in: teardown deletes an app
	// once everything that depends on it is gone, so its layers and
	// critical path are those of the reverse graph.
	walk := g
	if action == dag.Teardown {
		walk = g.Reverse()
	}
	order, err := walk.TopoOrder()
	if err != nil {
		return nil, err
	}
	p := &Plan{Platform: d.Platform.Metadata.Name, Scope: scope, Action: action, StepMode: d.Platform.Spec.Workflow.StepMode}

	// Layers over apps only: joins have depth 0 so they do not inflate it.
	depth := map[string]int{}
	for _, n := range order {
		best := 0
		for _, dep := range walk.Deps(n) {
			best = max(best, depth[dep])
		}
		if d.Node(n).Kind == dag.App {
			best++
		}
		depth[n] = best
	}
	deployOrder, err := g.TopoOrder()
	if err != nil {
		return nil, err
	}
	for _, n := range deployOrder {
		if d.Node(n).Kind == dag.App {
			p.Order = append(p.Order, n)
		}
	}
	for _, n := range order {
		node := d.Node(n)
		if node.Kind != dag.App {
			continue
		}
		l := depth[n] - 1
		for len(p.Layers) <= l {
			p.Layers = append(p.Layers, nil)
		}
		p.Layers[l] = append(p.Layers[l], n)
		nd := Node{Name: n, Stack: node.Stack, Layer: l, Weight: secs(Weight(d, n))}
		for _, dep := range g.Deps(n) {
			if d.Node(dep).Kind == dag.App {
				nd.DependsOn = append(nd.DependsOn, dep)
			} else {
				nd.Stacks = append(nd.Stacks, dep)
			}
		}
		p.Nodes = append(p.Nodes, nd)
	}
	for _, l := range p.Layers {
		p.MaxParallel = max(p.MaxParallel, len(l))
		var slowest time.Duration
		for _, n := range l {
			slowest = max(slowest, Weight(d, n))
		}
		p.WaveMakespan += secs(slowest)
	}
	for _, s := range d.Stacks() {
		if apps := d.StackApps(s); len(apps) > 0 {
			p.Stacks = append(p.Stacks, Stack{Name: s, Apps: apps, DependsOn: d.StackDeps(s)})
		}
	}

	path, makespan, err := walk.CriticalPath(func(n string) time.Duration { return Weight(d, n) })
	if err != nil {
		return nil, err
	}
	for _, n := range path {
		if d.Node(n).Kind == dag.App {
			p.CriticalPath = append(p.CriticalPath, n)
		}
	}
	p.Makespan = secs(makespan)

	rev, err := g.Reverse().TopoOrder()
	if err != nil {
		return nil, err
	}
	for _, n := range rev {
		if d.Node(n).Kind == dag.App {
			p.Teardown = append(p.Teardown, n)
		}
	}
	if action == dag.Teardown {
		p.Order = p.Teardown
	}
	return p, nil
}
