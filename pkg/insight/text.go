package insight

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteStatus renders the run as text or json.
func (r *Run) WriteStatus(w io.Writer, format string) error {
	w = r.secrets.Writer(w)
	switch format {
	case "json":
		return writeJSON(w, r)
	case "", "text":
		_, err := io.WriteString(w, r.statusText())
		return err
	}
	return fmt.Errorf("unknown output format %q: want text or json", format)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (r *Run) header() string {
	what := r.Action
	if r.Platform != "" {
		what += " of " + r.Platform
	}
	h := fmt.Sprintf("%s: workflow %s/%s %s", what, r.Namespace, r.Workflow, r.Phase)
	if r.Seconds > 0 {
		if r.FinishedAt.IsZero() {
			h += " for " + dur(r.Seconds)
		} else {
			h += " after " + dur(r.Seconds)
		}
	}
	if r.Message != "" && r.Phase != "Succeeded" {
		h += " (" + r.Message + ")"
	}
	return h
}

func (r *Run) statusText() string {
	if r.Validation != nil {
		return r.validationText()
	}
	var b strings.Builder
	b.WriteString(r.header() + "\n")
	count := map[string]int{}
	var order []string
	for _, n := range r.apps() {
		if count[n.State] == 0 {
			order = append(order, n.State)
		}
		count[n.State]++
	}
	var parts []string
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
	}
	b.WriteString("  " + strings.Join(parts, " · ") + "\n\n")
	fmt.Fprintf(&b, "%-28s %-22s %8s  %s\n", "APP", "STATE", "TIME", "ARGO CD (sync/health) · WHY")
	blocking := map[string][]string{} // blocker → the waiting apps it holds back
	var blockers []string
	for _, n := range r.apps() {
		detail := argoText(n.ArgoCD)
		switch n.State {
		case Waiting:
			detail = "waits for " + strings.Join(n.WaitingFor, ", ")
			if len(n.WaitingFor) == 0 {
				detail = "ready: every dependency is done (parallelism limit, or the controller has yet to start it)"
			}
			for _, x := range n.WaitingFor {
				if len(blocking[x]) == 0 {
					blockers = append(blockers, x)
				}
				blocking[x] = append(blocking[x], n.Name)
			}
		case Omitted, NotRun:
			detail = string(n.State)
			if len(n.BlockedBy) > 0 {
				detail = "not run: " + strings.Join(n.BlockedBy, ", ") + " failed"
			}
		case Failed:
			detail = n.Message
		}
		state := n.State
		if n.Attempts > 1 {
			state += fmt.Sprintf(" #%d", n.Attempts)
		}
		t := ""
		if n.Seconds > 0 {
			t = dur(n.Seconds)
		}
		fmt.Fprintf(&b, "%-28s %-22s %8s  %s\n", n.Name, state, t, detail)
	}
	if len(blockers) > 0 {
		b.WriteString("\nHolding back the waiting apps:\n")
		for _, x := range blockers {
			n := r.byName[x]
			what := argoText(n.ArgoCD)
			if n.State == Waiting {
				what = "waits for " + strings.Join(n.WaitingFor, ", ")
			}
			fmt.Fprintf(&b, "  %s (%s%s): %s\n", x, n.State, since(n), what)
			for _, p := range problems(n.ArgoCD) {
				fmt.Fprintf(&b, "      %s\n", p)
			}
			fmt.Fprintf(&b, "      holds back %s\n", list(blocking[x], 8))
		}
	}
	return b.String()
}

// apps are the app nodes in run order (joins are structure, not shown).
func (r *Run) apps() []*Node {
	var out []*Node
	for _, n := range r.Nodes {
		if !n.Stack {
			out = append(out, n)
		}
	}
	return out
}

func argoText(a *AppStatus) string {
	switch {
	case a == nil:
		return "-"
	case !a.Exists:
		return "no Application"
	}
	s := or(a.Sync, "-") + "/" + or(a.Health, "-")
	if a.HealthMessage != "" {
		s += ": " + a.HealthMessage
	}
	if a.OperationPhase != "" && a.OperationPhase != "Succeeded" {
		s += fmt.Sprintf(" (sync operation %s", a.OperationPhase)
		if a.OperationMessage != "" {
			s += ": " + a.OperationMessage
		}
		s += ")"
	}
	return s
}

func problems(a *AppStatus) []string {
	if a == nil {
		return nil
	}
	if len(a.Problems) > 5 {
		return append(a.Problems[:5:5], fmt.Sprintf("and %d more", len(a.Problems)-5))
	}
	return a.Problems
}

func since(n *Node) string {
	if n.Seconds == 0 {
		return ""
	}
	if n.FinishedAt.IsZero() {
		return " for " + dur(n.Seconds)
	}
	return " after " + dur(n.Seconds)
}

func dur(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func list(names []string, most int) string {
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
}
