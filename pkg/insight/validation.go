package insight

import (
	"fmt"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/step/aggregate"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// A validate run has no app nodes: one task per stack (and namespace)
// reads its apps' Applications and writes what it read to its step result.
// Its status is that result, app by app, not Argo CD's state now: the run
// is the record of what was validated when.
const actionValidate = "validate"

// Validation is a validate run's account: each app's health and sync as
// its task's step read them, and their aggregate (RFC 5.5).
type Validation struct {
	// Aggregate over every app of the run; "" while a task has not
	// reported. A finished run with a task that reported nothing (its pod
	// never ran the step) is Failed: those apps were not validated.
	Aggregate string `json:"aggregate"`
	// Apps in task order, each task's apps in the order it read them.
	Apps []ValidatedApp `json:"apps"`
}

// ValidatedApp is one app's line. Verdict is its contribution to the
// aggregate, "" while its task has not reported; the rest is what the step
// read (stepresult.AppHealth), or, for a task without a result, nothing.
type ValidatedApp struct {
	Task  string `json:"task"`
	State string `json:"state"` // the task's state: done, checking, failed…
	stepresult.AppHealth
}

// validation reads every validate task's step result into r.Validation.
// A task without one keeps the apps its parameter names, with no verdict.
func (r *Run) validation(wf *wfv1.Workflow, nodes map[string]*wfv1.NodeStatus, done bool) {
	v := &Validation{Aggregate: aggregate.Healthy}
	unread := false
	for _, n := range r.Nodes {
		var res *stepresult.ValidateResult
		if an := nodes[n.Name]; an != nil {
			res = livestate.ValidationOf(wf, an)
		}
		if res == nil || len(res.Apps) == 0 {
			unread = true
			for _, a := range n.Apps {
				v.Apps = append(v.Apps, ValidatedApp{Task: n.Name, State: n.State, AppHealth: stepresult.AppHealth{App: a}})
			}
			continue
		}
		for _, a := range res.Apps {
			v.Apps = append(v.Apps, ValidatedApp{Task: n.Name, State: n.State, AppHealth: a})
			v.Aggregate = aggregate.Worst(v.Aggregate, a.Verdict)
		}
	}
	switch {
	case unread && done:
		v.Aggregate = aggregate.Failed
	case unread:
		v.Aggregate = ""
	}
	r.Validation = v
}

// validationText is status for a validate run: the aggregate and the
// verdicts counted, then one line per app.
func (r *Run) validationText() string {
	v := r.Validation
	var b strings.Builder
	b.WriteString(r.header() + "\n")
	count := map[string]int{}
	var order []string
	for _, a := range v.Apps {
		k := or(a.Verdict, "not read ("+a.State+")")
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := []string{"aggregate " + or(v.Aggregate, "not known yet")}
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[k], k))
	}
	b.WriteString("  " + strings.Join(parts, " · ") + "\n\n")
	fmt.Fprintf(&b, "%-28s %-22s %8s  %s\n", "APP", "VERDICT", "TIME", "ARGO CD (sync/health) · WHY")
	for _, a := range v.Apps {
		n := r.byName[a.Task]
		verdict, detail := a.Verdict, or(a.SyncStatus, "-")+"/"+or(a.Health, "-")
		switch {
		case a.Verdict == "":
			verdict, detail = a.State, "not read: task "+a.Task+" "+a.State
			if n.Message != "" {
				detail += ": " + n.Message
			}
		case a.Error != "":
			detail = a.Error
		case a.HealthMessage != "":
			detail += ": " + a.HealthMessage
		}
		if a.OperationPhase != "" && a.OperationPhase != "Succeeded" {
			detail += " (sync operation " + a.OperationPhase + ")"
		}
		t := ""
		if n.Seconds > 0 {
			t = dur(n.Seconds)
		}
		fmt.Fprintf(&b, "%-28s %-22s %8s  %s\n", a.App, verdict, t, detail)
	}
	return b.String()
}
