package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Formats lists the output formats of Write.
var Formats = []string{"text", "json", "mermaid", "dot"}

// Write renders the plan in one of Formats.
func (p *Plan) Write(w io.Writer, format string) error {
	switch format {
	case "", "text":
		return p.text(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	case "mermaid":
		_, err := io.WriteString(w, p.Mermaid())
		return err
	case "dot":
		_, err := io.WriteString(w, p.Dot())
		return err
	}
	return fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(Formats, ", "))
}

func (p *Plan) text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Platform %s, scope %s, action %s: %d apps in %d stacks\n\n", p.Platform, p.Scope, p.Action, len(p.Nodes), len(p.Stacks))
	if p.Action == "teardown" {
		b.WriteString("Layers, teardown direction (an app is deleted as soon as everything that depends on it is gone; layers are for reading only):\n")
	} else {
		b.WriteString("Layers (an app starts as soon as its own dependencies are Healthy; layers are for reading only):\n")
	}
	for i, l := range p.Layers {
		fmt.Fprintf(&b, "  %2d  %s\n", i, strings.Join(l, ", "))
	}
	fmt.Fprintf(&b, "\nMost apps in parallel: %d\n", p.MaxParallel)
	if p.StepMode.Plugin() {
		b.WriteString("Steps run in the deployctl executor plugin (stepMode: plugin): one agent pod per run, none per app; the workflow controller needs ARGO_EXECUTOR_PLUGINS=true\n")
	}
	b.WriteString("\nCritical path (health timeouts as worst case):\n")
	for _, n := range p.CriticalPath {
		fmt.Fprintf(&b, "  %-32s %s\n", n, Short(p.node(n).Weight.Duration()))
	}
	fmt.Fprintf(&b, "  worst-case makespan %s (with wave barriers: %s)\n", Short(p.Makespan.Duration()), Short(p.WaveMakespan.Duration()))
	b.WriteString("\nDeploy order:\n  " + strings.Join(p.deployOrder(), " → ") + "\n")
	b.WriteString("\nTeardown order:\n  " + strings.Join(p.Teardown, " → ") + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *Plan) deployOrder() []string {
	if p.Action == "teardown" {
		out := make([]string, len(p.Teardown))
		for i, n := range p.Teardown {
			out[len(out)-1-i] = n
		}
		return out
	}
	return p.Order
}

func (p *Plan) node(name string) Node {
	for _, n := range p.Nodes {
		if n.Name == name {
			return n
		}
	}
	return Node{}
}

// Short prints 1h30m0s as 1h30m and 5m0s as 5m.
func Short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// id makes a Mermaid/Graphviz-safe identifier; '-' → '_' is injective on
// DNS labels, which never contain '_'.
func id(prefix, name string) string { return prefix + strings.ReplaceAll(name, "-", "_") }

// Mermaid renders the DAG as a flowchart in execution order (an arrow goes
// from a dependency to what waits for it), one subgraph per stack.
func (p *Plan) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, s := range p.Stacks {
		fmt.Fprintf(&b, "  subgraph %s[\"%s\"]\n", id("s_", s.Name), s.Name)
		for _, a := range s.Apps {
			fmt.Fprintf(&b, "    %s[\"%s\"]\n", id("a_", a), a)
		}
		b.WriteString("  end\n")
	}
	for _, s := range p.Stacks {
		for _, dep := range s.DependsOn {
			fmt.Fprintf(&b, "  %s ==> %s\n", id("s_", dep), id("s_", s.Name))
		}
	}
	for _, n := range p.Nodes {
		for _, dep := range n.DependsOn {
			fmt.Fprintf(&b, "  %s --> %s\n", id("a_", dep), id("a_", n.Name))
		}
	}
	return b.String()
}

// Dot renders the DAG for Graphviz, one cluster per stack; stack-level
// edges run between the clusters' invisible anchors.
func (p *Plan) Dot() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=LR;\n  compound=true;\n  node [shape=box, style=rounded];\n", p.Platform)
	for _, s := range p.Stacks {
		fmt.Fprintf(&b, "  subgraph %s {\n    label=%q;\n    %s [shape=point, style=invis];\n", id("cluster_", s.Name), s.Name, id("s_", s.Name))
		for _, a := range s.Apps {
			fmt.Fprintf(&b, "    %s [label=%q];\n", id("a_", a), a)
		}
		b.WriteString("  }\n")
	}
	for _, s := range p.Stacks {
		for _, dep := range s.DependsOn {
			fmt.Fprintf(&b, "  %s -> %s [ltail=%s, lhead=%s, style=bold];\n", id("s_", dep), id("s_", s.Name), id("cluster_", dep), id("cluster_", s.Name))
		}
	}
	for _, n := range p.Nodes {
		for _, dep := range n.DependsOn {
			fmt.Fprintf(&b, "  %s -> %s;\n", id("a_", dep), id("a_", n.Name))
		}
	}
	b.WriteString("}\n")
	return b.String()
}
