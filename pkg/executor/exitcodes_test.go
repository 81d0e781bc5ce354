package executor

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/executor/internal/preflight"
	"github.com/deployctl/deployctl/pkg/report"
)

// The exit code of every outcome (the contract: 0 ok, 1 failure, 2
// partial, 3 invalid, 4 timeout).
func TestExitCodes(t *testing.T) {
	for agg, want := range map[string]int{AggHealthy: 0, AggProgressing: 2, AggDegraded: 2, AggFailed: 1} {
		if got := healthCode(agg); got != want {
			t.Errorf("healthCode(%s) = %d, want %d", agg, got, want)
		}
	}
	checks := func(cs ...report.Check) []report.Check { return cs }
	for name, tc := range map[string]struct {
		checks []report.Check
		want   int
	}{
		"all pass, warnings allowed": {checks(report.Check{Status: report.Pass}, report.Check{Status: report.Warn}), 0},
		"cluster not ready":          {checks(report.Check{Status: report.Fail, Code: 1}, report.Check{Status: report.Pass}), 1},
		"primitive missing wins":     {checks(report.Check{Status: report.Fail, Code: 1}, report.Check{Status: report.Fail, Code: 3}), 3},
		"skips do not fail":          {checks(report.Check{Status: report.Skip}), 0},
	} {
		if got := preflight.Code(tc.checks); got != tc.want {
			t.Errorf("preflight %s: %d, want %d", name, got, tc.want)
		}
	}
	for code, want := range map[int]string{0: report.StatusSucceeded, 1: report.StatusFailed, 2: report.StatusPartial, 3: report.StatusInvalid, 4: report.StatusTimeout} {
		if got := report.StatusOf(code); got != want {
			t.Errorf("StatusOf(%d) = %s", code, got)
		}
	}
	comps := func(statuses ...string) []report.Component {
		var out []report.Component
		for _, s := range statuses {
			out = append(out, report.Component{Status: s})
		}
		return out
	}
	for name, tc := range map[string]struct {
		phase wfv1.WorkflowPhase
		comps []report.Component
		left  int
		want  int
	}{
		"clean":                        {wfv1.WorkflowSucceeded, comps(report.CompDeleted, report.CompNothingToDo), 0, 0},
		"absent platform":              {wfv1.WorkflowSucceeded, comps(report.CompNothingToDo, report.CompNothingToDo), 0, 0},
		"orphans":                      {wfv1.WorkflowFailed, comps(report.CompDeleted, report.CompOrphans, report.CompNotRun), 1, 2},
		"an Application left":          {wfv1.WorkflowSucceeded, comps(report.CompDeleted), 1, 2},
		"a node failed":                {wfv1.WorkflowFailed, comps(report.CompDeleted, "Failed", report.CompNotRun), 1, 1},
		"orphans and a failure":        {wfv1.WorkflowFailed, comps(report.CompOrphans, "Error"), 0, 1},
		"run failed, no node to blame": {wfv1.WorkflowError, comps(report.CompNotRun), 0, 1},
	} {
		if got := teardownCode(tc.phase, tc.comps, tc.left); got != tc.want {
			t.Errorf("teardown %s: %d, want %d", name, got, tc.want)
		}
	}
}
