package insight

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Explanation answers "why is APP not deploying (or not deleted)?".
type Explanation struct {
	Workflow string `json:"workflow"`
	Action   string `json:"action"`
	Phase    string `json:"phase"`
	Node     *Node  `json:"node"`
	Summary  string `json:"summary"`
	// WaitingFor are the direct blockers of a node that has not started.
	WaitingFor []*Node `json:"waitingFor,omitempty"`
	// Causes end every chain that holds the node back: for a waiting node
	// the first blockers that are not waiting themselves (running, failed,
	// or ready to start); for an omitted one, the failed nodes upstream.
	Causes []Cause `json:"causes,omitempty"`
	// Affected: for a failed node, what was not run because of it; for a
	// running one, what waits for it.
	Affected []string `json:"affected,omitempty"`
}

// Cause is a node at the end of a chain, and the chain from the explained
// node to it.
type Cause struct {
	Node *Node    `json:"node"`
	Path []string `json:"path"`
}

// Explain explains one app (its task or Application name).
func (r *Run) Explain(name string) (*Explanation, error) {
	if r.Validation != nil {
		return nil, fmt.Errorf("workflow %s is a validate run: it deploys nothing, and `deployctl status %s` shows each app's health and sync as it read them", r.Workflow, r.Workflow)
	}
	n := r.Node(name)
	if n == nil || n.Stack {
		var names []string
		for _, a := range r.apps() {
			names = append(names, a.Name)
		}
		return nil, fmt.Errorf("%s is not an app of workflow %s (%s of %s); its apps: %s",
			name, r.Workflow, r.Action, orDash(r.Platform), list(names, 12))
	}
	e := &Explanation{Workflow: r.Namespace + "/" + r.Workflow, Action: r.Action, Phase: r.Phase, Node: n}
	verb := "deploying"
	if r.Action == actionTeardown {
		verb = "deleted"
	}
	switch n.State {
	case Waiting:
		e.WaitingFor = r.blockers(n)
		e.Causes = r.causes(n)
		if len(e.WaitingFor) == 0 {
			e.Summary = fmt.Sprintf("%s is ready: everything it depends on is done, and the workflow has not started it yet (its parallelism limit, or the controller's next pass)", n.Name)
		} else if r.Action == actionTeardown {
			e.Summary = fmt.Sprintf("%s is not deleted yet: it goes after what depends on it, and %s still there", n.Name, isAre(names(e.WaitingFor)))
		} else {
			e.Summary = fmt.Sprintf("%s is not %s yet: it waits until %s Healthy", n.Name, verb, isAre(names(e.WaitingFor)))
		}
	case Omitted, NotRun:
		for _, b := range n.BlockedBy {
			e.Causes = append(e.Causes, Cause{Node: r.byName[b], Path: r.path(n, b)})
		}
		switch {
		case len(n.BlockedBy) > 0 && r.Action == actionTeardown:
			e.Summary = fmt.Sprintf("%s was never deleted: %s failed, and it goes only after them (what depends on an app is deleted first)", n.Name, strings.Join(n.BlockedBy, ", "))
		case len(n.BlockedBy) > 0:
			e.Summary = fmt.Sprintf("%s was never %s: %s failed, and it depends on it", n.Name, past(verb), strings.Join(n.BlockedBy, ", "))
		default:
			e.Summary = fmt.Sprintf("%s was never %s: the workflow ended (%s) before its turn", n.Name, past(verb), r.Phase)
		}
	case Failed:
		e.Summary = fmt.Sprintf("%s failed%s: %s", n.Name, since(n), orDash(n.Message))
		for _, d := range r.downstream(n) {
			if !d.Stack && (d.State == Omitted || d.State == NotRun || d.State == Waiting) {
				e.Affected = append(e.Affected, d.Name)
			}
		}
	case Healthy, Deleted, Done:
		e.Summary = fmt.Sprintf("%s is %s: done%s", n.Name, n.State, since(n))
	default:
		e.Summary = fmt.Sprintf("%s is %s%s", n.Name, n.State, since(n))
		if n.Attempts > 1 {
			e.Summary += fmt.Sprintf(" (attempt %d)", n.Attempts)
		}
		for _, d := range r.downstream(n) {
			if !d.Stack && d.State == Waiting {
				e.Affected = append(e.Affected, d.Name)
			}
		}
	}
	return e, nil
}

// causes follows the waiting chains from n to their ends, each with the
// shortest chain of dependencies to it.
func (r *Run) causes(n *Node) []Cause {
	prev := map[string]string{n.Name: ""}
	queue := []*Node{n}
	var ends []*Node
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		bs := r.blockers(x)
		if len(bs) == 0 && x != n {
			ends = append(ends, x) // waiting, but ready: the end of its chain
		}
		for _, b := range bs {
			if _, seen := prev[b.Name]; seen {
				continue
			}
			prev[b.Name] = x.Name
			if b.State == Waiting {
				queue = append(queue, b)
			} else {
				ends = append(ends, b)
			}
		}
	}
	r.sortByOrder(ends)
	out := make([]Cause, 0, len(ends))
	for _, e := range ends {
		out = append(out, Cause{Node: e, Path: r.path(n, e.Name)})
	}
	return out
}

// path is the shortest chain of dependencies from n to the node named to,
// stack joins shown as "stack NAME".
func (r *Run) path(n *Node, to string) []string {
	prev := map[string]string{n.Name: ""}
	queue := []string{n.Name}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		deps := append([]string(nil), r.byName[x].DependsOn...)
		sort.Strings(deps)
		for _, d := range deps {
			if _, seen := prev[d]; seen || r.byName[d] == nil {
				continue
			}
			prev[d] = x
			if d == to {
				var out []string
				for y := d; y != ""; y = prev[y] {
					out = append([]string{r.label(y)}, out...)
				}
				return out
			}
			queue = append(queue, d)
		}
	}
	return []string{n.Name, to}
}

func (r *Run) label(name string) string {
	if n := r.byName[name]; n != nil && n.Stack {
		return "stack " + name
	}
	return name
}

// Write renders the explanation as text (one screen) or json.
func (e *Explanation) Write(w io.Writer, r *Run, format string) error {
	w = r.secrets.Writer(w)
	switch format {
	case "json":
		return writeJSON(w, e)
	case "", "text":
	default:
		return fmt.Errorf("unknown output format %q: want text or json", format)
	}
	var b strings.Builder
	b.WriteString(r.header() + "\n\n")
	b.WriteString(e.Summary + "\n")
	n := e.Node
	if a := n.ArgoCD; a != nil && (a.Exists || (n.State != Waiting && n.State != Omitted && n.State != NotRun)) {
		fmt.Fprintf(&b, "  Argo CD now: %s\n", argoText(n.ArgoCD))
		for _, p := range problems(n.ArgoCD) {
			fmt.Fprintf(&b, "    %s\n", p)
		}
	}
	for _, d := range n.Diagnostics {
		fmt.Fprintf(&b, "  - %s\n", d)
	}
	if len(e.WaitingFor) > 0 {
		b.WriteString("\nIt waits for:\n")
		for _, x := range e.WaitingFor {
			b.WriteString(nodeLine(x))
		}
	}
	if len(e.Causes) > 0 && (n.State != Waiting || chained(e.WaitingFor)) {
		head := "\nWhat holds the chain back:\n"
		if n.State != Waiting {
			head = "\nBecause of:\n"
		}
		b.WriteString(head)
		for i, c := range e.Causes {
			if i == 8 {
				fmt.Fprintf(&b, "  and %d more\n", len(e.Causes)-8)
				break
			}
			b.WriteString(nodeLine(c.Node))
			fmt.Fprintf(&b, "      %s\n", strings.Join(c.Path, " ← "))
			for _, d := range c.Node.Diagnostics {
				fmt.Fprintf(&b, "      - %s\n", d)
			}
		}
	}
	if len(e.Affected) > 0 {
		head := "Not run because of it"
		if n.State != Failed {
			head = "Waiting for it"
		}
		fmt.Fprintf(&b, "\n%s: %s\n", head, list(e.Affected, 12))
	}
	if n.State == Failed && r.Action == actionDeploy {
		b.WriteString("\nFix it, then run `deployctl deploy` again: it resumes this run; only failed and not-run apps run again.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// chained: a blocker waits itself, so the causes say more than the
// blockers do.
func chained(blockers []*Node) bool {
	for _, b := range blockers {
		if b.State == Waiting {
			return true
		}
	}
	return false
}

func nodeLine(n *Node) string {
	s := fmt.Sprintf("  %-26s %s%s", n.Name, n.State, since(n))
	switch n.State {
	case Failed:
		s += ": " + orDash(n.Message)
	case Waiting, Omitted, NotRun:
	default:
		s += " · Argo CD " + argoText(n.ArgoCD)
	}
	out := s + "\n"
	if n.State != Failed {
		for _, p := range problems(n.ArgoCD) {
			out += "      " + p + "\n"
		}
	}
	return out
}

func names(nodes []*Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

func isAre(ns []string) string {
	if len(ns) == 1 {
		return ns[0] + " is"
	}
	return list(ns, 6) + " are"
}

func past(verb string) string {
	if verb == "deploying" {
		return "deployed"
	}
	return verb
}

func orDash(s string) string { return or(s, "-") }
