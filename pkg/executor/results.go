package executor

import "github.com/deployctl/deployctl/pkg/stepresult"

// stepDiagnostics are a step result's lines worth showing for a failure:
// the step's own account, then what explains it.
func stepDiagnostics(res *stepresult.Result) []string {
	var out []string
	if h := res.Headline(); h != "" {
		out = append(out, h)
	}
	return append(out, res.Diagnostics()...)
}
