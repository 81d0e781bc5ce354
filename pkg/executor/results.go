package executor

import (
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/stepresult"
)

// stepDiagnostics are a step result's lines worth showing for a failure:
// the step's own account, then what explains it.
func stepDiagnostics(res *stepresult.Result) []string {
	var out []string
	if h := res.Headline(); h != "" {
		out = append(out, h)
	}
	return append(out, res.Diagnostics()...)
}

// nodeSeconds is a node's run time so far, or in total when finished.
func nodeSeconds(n *wfv1.NodeStatus) float64 {
	if n.StartedAt.IsZero() {
		return 0
	}
	if n.FinishedAt.IsZero() {
		return sinceSeconds(n.StartedAt.Time)
	}
	return n.FinishedAt.Sub(n.StartedAt.Time).Round(100 * 1e6).Seconds()
}

// sinceSeconds is a duration in seconds, rounded to milliseconds.
func sinceSeconds(t time.Time) float64 {
	return float64(time.Since(t).Round(time.Millisecond)) / float64(time.Second)
}
