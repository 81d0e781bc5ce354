// Package workflow is the executor's workflow phase: what to do with the
// platform's runs (submit, resume, follow, skip, refuse), and Argo's retry
// of a failed run done here.
package workflow

import (
	"fmt"
	"sort"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
)

// What deploy or teardown does with the platform's workflows.
const (
	DecideSubmit   = "submit"   // a new run of the compiled workflow
	DecideResume   = "resume"   // Argo's retry of the last, failed run
	DecideFollow   = "follow"   // the same run is already running: watch it
	DecideSkip     = "skip"     // deploy only: up to date, nothing to run
	DecideConflict = "conflict" // another deploy or teardown of the platform is running
	DecideNothing  = "nothing"  // teardown only: no Application of the scope exists
)

// Decision is what to do, with the run it is about and why.
type Decision struct {
	Kind   string
	Run    *wfv1.Workflow
	Reason string
}

// Decide picks what an action does, from every Workflow of the platform:
//
//  1. A run of this platform's deploy or teardown that has not finished:
//     if it is this action with this spec hash, follow it (never start a
//     second); any other is a conflict (two deploys of different specs, or
//     a deploy during a teardown, would race): refuse.
//  2. Deploy only: if the platform's last deploy run has this spec hash and
//     Failed or Errored, resume it: Argo's retry semantics re-run only the
//     failed and not-yet-run nodes; succeeded apps are not synced again. A
//     failed run that is not the last (a newer run of another spec came
//     after it) is stale and not resumed.
//  3. Deploy only: if that last run has this spec hash and Succeeded, and
//     upToDate (every app of the scope Healthy and Synced) says so, skip:
//     nothing is applied to the platform (INV-6, docs/requirements.md#inv-6-idempotent-execution). force re-runs anyway.
//  4. Otherwise submit a new run. Teardown always submits a new run (its
//     steps find deleted apps gone in a second, and a new run takes the
//     current pv-policy and crd-policy), except to follow a running one.
func Decide(runs []wfv1.Workflow, action dag.Action, hash string, force bool, upToDate func() (bool, string)) Decision {
	sorted := append([]wfv1.Workflow(nil), runs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].CreationTimestamp, sorted[j].CreationTimestamp
		if !a.Equal(&b) {
			return b.Before(&a)
		}
		return sorted[i].Name > sorted[j].Name
	})
	for i := range sorted {
		w := &sorted[i]
		act := w.Labels[compile.LabelAction]
		if w.Status.Phase.Completed() || (act != string(dag.Deploy) && act != string(dag.Teardown)) {
			continue
		}
		if act == string(action) && w.Labels[compile.LabelSpecHash] == hash {
			return Decision{DecideFollow, w, fmt.Sprintf("%s is already running this spec (%s)", w.Name, PhaseOf(w))}
		}
		return Decision{DecideConflict, w, fmt.Sprintf("%s %s (spec hash %s) is %s: wait for it to finish, or stop it (argo stop %s -n %s)",
			act, w.Name, w.Labels[compile.LabelSpecHash], PhaseOf(w), w.Name, w.Namespace)}
	}
	if action != dag.Deploy {
		return Decision{Kind: DecideSubmit, Reason: "a teardown always runs from the top (deleted apps are found gone)"}
	}
	var last *wfv1.Workflow
	for i := range sorted {
		if sorted[i].Labels[compile.LabelAction] == string(action) {
			last = &sorted[i]
			break
		}
	}
	switch {
	case last == nil:
		return Decision{Kind: DecideSubmit, Reason: "no earlier run of this platform"}
	case last.Labels[compile.LabelSpecHash] != hash:
		return Decision{Kind: DecideSubmit, Reason: fmt.Sprintf("the last run %s was of another spec (hash %s)", last.Name, last.Labels[compile.LabelSpecHash])}
	}
	switch last.Status.Phase {
	case wfv1.WorkflowFailed, wfv1.WorkflowError:
		return Decision{DecideResume, last, fmt.Sprintf("the last run %s of this spec %s: resuming it", last.Name, last.Status.Phase)}
	case wfv1.WorkflowSucceeded:
		if force {
			return Decision{DecideSubmit, last, "forced run (the last run " + last.Name + " Succeeded)"}
		}
		ok, why := upToDate()
		if ok {
			return Decision{DecideSkip, last, fmt.Sprintf("the last run %s of this spec Succeeded and %s", last.Name, why)}
		}
		return Decision{DecideSubmit, last, fmt.Sprintf("the last run %s of this spec Succeeded, but %s", last.Name, why)}
	}
	return Decision{Kind: DecideSubmit, Reason: fmt.Sprintf("the last run %s ended %s", last.Name, PhaseOf(last))}
}

// PhaseOf is a run's phase, Pending before the controller set one.
func PhaseOf(w *wfv1.Workflow) string {
	if w.Status.Phase == "" {
		return "Pending"
	}
	return string(w.Status.Phase)
}
