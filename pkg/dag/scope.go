package dag

import (
	"fmt"
	"strings"
)

// Action is what a scope is computed for: deploying pulls in what the scope
// depends on; tearing down pulls in what depends on it.
type Action string

const (
	Deploy   Action = "deploy"
	Teardown Action = "teardown"
	Validate Action = "validate"
)

// ParseAction accepts deploy, teardown or validate.
func ParseAction(s string) (Action, error) {
	switch a := Action(s); a {
	case Deploy, Teardown, Validate:
		return a, nil
	}
	return "", fmt.Errorf("unknown action %q: want deploy, teardown or validate", s)
}

// Scope restricts the DAG to a target: "platform" (everything), "stack:NAME"
// or "app:NAME". For deploy and validate the result is the target plus
// everything it transitively depends on; for teardown, the target plus
// everything that transitively depends on it (those must go first).
func (d *DAG) Scope(scope string, action Action) (*DAG, error) {
	if scope == "" || scope == "platform" {
		return d, nil
	}
	kind, name, ok := strings.Cut(scope, ":")
	n := d.nodes[name]
	switch {
	case !ok || (kind != "stack" && kind != "app"):
		return nil, fmt.Errorf("invalid scope %q: want platform, stack:NAME or app:NAME", scope)
	case n == nil || (kind == "app") != (n.Kind == App):
		return nil, fmt.Errorf("invalid scope %q: no %s named %q", scope, kind, name)
	}
	seeds := []string{name}
	if n.Kind == Stack {
		seeds = append(seeds, d.stacks[name]...)
	}
	var keep []string
	if action == Teardown {
		keep = d.Graph.DependentsClosure(seeds...)
	} else {
		keep = d.Graph.DepsClosure(seeds...)
	}
	in := make(map[string]bool, len(keep))
	for _, k := range keep {
		in[k] = true
	}
	sub := *d
	sub.Graph = d.Graph.Subgraph(func(id string) bool { return in[id] })
	return &sub, nil
}
