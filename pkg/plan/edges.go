package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/resdeps"
	"github.com/deployctl/deployctl/pkg/spec"
)

// EdgeReport is `plan --explain-edges`: a spec's dependsOn entries held
// against what its apps deploy.
type EdgeReport struct {
	Platform  string `json:"platform"`
	Inventory string `json:"inventory"`
	// Missing are dependencies a resource shows that no entry orders, not
	// even through others: the deploy may start the consumer first. Errors.
	Missing []EdgeFinding `json:"missing"`
	// Unsupported are entries nothing the apps deploy needs. Information:
	// configuration (a URL, a host name) is a dependency no rule reads.
	Unsupported []EntryFinding `json:"unsupported"`
	Supported   []EntryFinding `json:"supported"`
	// Unchecked are entries with an app on either side that has no inventory.
	Unchecked []EntryFinding `json:"unchecked"`
	Conflicts []string       `json:"conflicts,omitempty"`
	// NoInventory lists the spec's apps without a folder.
	NoInventory []string `json:"noInventory,omitempty"`
	Inferred    int      `json:"inferred"`
}

// EdgeFinding is one dependency found in the resources.
type EdgeFinding struct {
	From     string             `json:"from"`
	To       string             `json:"to"`
	Evidence []resdeps.Evidence `json:"evidence"`
}

// EntryFinding is one dependsOn entry of the spec.
type EntryFinding struct {
	Where     string   `json:"where"` // file:line
	Field     string   `json:"field"` // spec.stacks[i]…dependsOn[k]
	From      string   `json:"from"`
	To        string   `json:"to"`
	Stack     bool     `json:"stack,omitempty"`
	Evidence  string   `json:"evidence,omitempty"`
	Unchecked []string `json:"unchecked,omitempty"`
	// Through: a dependency the entry orders only by way of others.
	Through string `json:"through,omitempty"`
}

// AppRefs names the Application of every app of d, for an inventory read
// from the Argo CD API: the app's applicationNamespace, else Argo CD's.
func AppRefs(d *dag.DAG) []resdeps.AppRef {
	var refs []resdeps.AppRef
	for _, a := range d.Apps() {
		ns := d.Node(a).App.ApplicationNamespace
		if ns == "" {
			ns = d.Platform.Spec.ArgoCD.Namespace
		}
		refs = append(refs, resdeps.AppRef{App: a, Namespace: ns, Application: a})
	}
	return refs
}

// InventoryApps names an inventory after the spec's apps (a folder per
// app) and gives each its destination namespace and CreateNamespace
// option. A folder that names no app is an error.
func InventoryApps(d *dag.DAG, source string, apps []resdeps.App) ([]resdeps.App, []string, error) {
	var out []resdeps.App
	var unknown []string
	have := map[string]bool{}
	for _, x := range apps {
		n := d.Node(x.Name)
		if n == nil || n.Kind != dag.App {
			unknown = append(unknown, x.Name)
			continue
		}
		have[x.Name] = true
		if dst := n.App.Destination; dst != nil {
			x.Namespace = dst.Namespace
		}
		x.CreatesNamespace = slices.Contains(n.App.SyncOptions, "CreateNamespace=true")
		out = append(out, x)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, nil, fmt.Errorf("%s: no app of the spec is named %s: name each folder after its app", source, strings.Join(unknown, ", "))
	}
	var missing []string
	for _, a := range d.Apps() {
		if !have[a] {
			missing = append(missing, a)
		}
	}
	return out, missing, nil
}

// ExplainEdges holds d's entries against the inventory apps (named as
// InventoryApps names them).
func ExplainEdges(d *dag.DAG, source string, apps []resdeps.App, noInventory []string) *EdgeReport {
	r := resdeps.Infer(apps)
	known := map[string]bool{}
	for _, a := range apps {
		known[a.Name] = true
	}
	c := resdeps.Compare(d, r, known)
	rep := &EdgeReport{Platform: d.Platform.Metadata.Name, Inventory: source, Inferred: len(r.Edges), NoInventory: noInventory,
		Missing: []EdgeFinding{}, Unsupported: []EntryFinding{}, Supported: []EntryFinding{}, Unchecked: []EntryFinding{}}
	for _, k := range r.Conflicts {
		rep.Conflicts = append(rep.Conflicts, k.String())
	}
	for _, e := range c.Missing {
		rep.Missing = append(rep.Missing, EdgeFinding{From: e.From, To: e.To, Evidence: e.Evidence})
	}
	doc := d.Doc()
	for _, x := range c.Declared {
		f := EntryFinding{Where: fmt.Sprintf("%s:%d", doc.File, doc.Line(x.Origin)), Field: x.Origin, From: x.From, To: x.To, Stack: x.Stack}
		switch {
		case len(x.Unchecked) > 0:
			f.Unchecked = x.Unchecked
			rep.Unchecked = append(rep.Unchecked, f)
		case x.Supported():
			f.Evidence = x.Evidence[0].From + " " + x.Evidence[0].Text()
			rep.Supported = append(rep.Supported, f)
		default:
			if len(x.Through) > 0 {
				f.Through = x.Through[0].Short()
			}
			rep.Unsupported = append(rep.Unsupported, f)
		}
	}
	return rep
}

// Write prints the report: text (errors, then information) or json.
func (r *EdgeReport) Write(w io.Writer, format string) error {
	return textOrJSON(w, format, "--explain-edges", r.text, r)
}

// textOrJSON writes a report as its text or as indented JSON.
func textOrJSON(w io.Writer, format, flag string, text func() string, v any) error {
	switch format {
	case "", "text":
		_, err := io.WriteString(w, text())
		return err
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return fmt.Errorf("unknown output format %q for %s: want text or json", format, flag)
}

func (r *EdgeReport) text() string {
	var b strings.Builder
	for _, m := range r.Missing {
		ev := m.Evidence[0]
		more := ""
		if n := len(m.Evidence) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more)", n)
		}
		fmt.Fprintf(&b, "error: missing dependency %s → %s: %s at %s needs %s from %s%s; no dependsOn orders them, so the deploy may start %s first: add %s to its dependsOn\n",
			m.From, m.To, ev.Object, ev.Where, ev.What, m.To, more, m.From, m.To)
	}
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "warning: %s\n", c)
	}
	for _, u := range r.Unsupported {
		if u.Through != "" {
			fmt.Fprintf(&b, "info: %s: %s: %s → %s: no resource needs it directly, but it orders %s through what %s waits for: declare that before you drop it\n",
				u.Where, u.Field, u.From, u.To, u.Through, u.To)
			continue
		}
		fmt.Fprintf(&b, "info: %s: %s: %s → %s: no resource needs it (from sync-wave order, or a dependency no rule reads: check before you drop it)\n",
			u.Where, u.Field, u.From, u.To)
	}
	for _, s := range r.Supported {
		fmt.Fprintf(&b, "ok: %s: %s → %s: %s\n", s.Where, s.From, s.To, s.Evidence)
	}
	for _, u := range r.Unchecked {
		fmt.Fprintf(&b, "unchecked: %s: %s → %s: no inventory for %s\n", u.Where, u.From, u.To, strings.Join(u.Unchecked, ", "))
	}
	if len(r.NoInventory) > 0 {
		n := fmt.Sprintf("%d apps", len(r.NoInventory))
		if len(r.NoInventory) == 1 {
			n = "1 app"
		}
		fmt.Fprintf(&b, "note: %s has nothing for %s: %s\n", r.Inventory, n, strings.Join(r.NoInventory, ", "))
	}
	fmt.Fprintf(&b, "Platform %s against %s: %d dependencies in the resources, %d missing; %d dependsOn entries: %d a resource needs, %d nothing needs, %d not checked\n",
		r.Platform, r.Inventory, r.Inferred, len(r.Missing), len(r.Supported)+len(r.Unsupported)+len(r.Unchecked),
		len(r.Supported), len(r.Unsupported), len(r.Unchecked))
	return b.String()
}

// EvidenceDAG is d with every dependsOn replaced by the dependencies the
// inventory shows: what --compare-waves --manifests holds the waves
// against. A cycle among them is an error naming the apps.
func EvidenceDAG(d *dag.DAG, apps []resdeps.App) (*dag.DAG, error) {
	r := resdeps.Infer(apps)
	p := *d.Platform
	p.Spec.Stacks = make([]spec.Stack, len(d.Platform.Spec.Stacks))
	needs := map[string][]string{}
	for _, e := range r.Edges {
		needs[e.From] = append(needs[e.From], e.To)
	}
	for i, s := range d.Platform.Spec.Stacks {
		s.DependsOn = nil
		s.Apps = slices.Clone(s.Apps)
		for j := range s.Apps {
			s.Apps[j].DependsOn = needs[s.Apps[j].Name]
		}
		p.Spec.Stacks[i] = s
	}
	out, err := dag.Build(&spec.Document{File: d.Doc().File + " (dependencies from the resources)", Platform: &p})
	if err != nil {
		return nil, fmt.Errorf("the dependencies the resources show make a cycle:\n%w", err)
	}
	return out, nil
}
