// Package aggregate is the aggregate health of a set of Argo CD Applications
// (RFC 5.5, docs/requirements.md#rfc-55-aggregate-health): all Healthy → Healthy; any Progressing → Progressing; any
// Degraded or Missing → Degraded; any failed (absent, unreadable) → Failed.
// The validate step uses it; so can anything else that must agree with it.
// Standard library only, like the step binary.
package aggregate

import "github.com/deployctl/deployctl/pkg/step/argocd/appstatus"

// The aggregate classes: three of Argo CD's health words, and Failed.
const (
	Healthy     = string(appstatus.Healthy)
	Progressing = string(appstatus.Progressing)
	Degraded    = string(appstatus.Degraded)
	Failed      = "Failed"
)

var rank = map[string]int{Healthy: 0, Progressing: 1, Degraded: 2, Failed: 3}

// Verdict is one readable application's class, from its Argo CD health
// status. Unknown and Suspended are neither Healthy nor on their way there:
// Degraded. An application not assessed yet ("") is on its way: Progressing.
func Verdict(health appstatus.Health) string {
	switch health {
	case appstatus.Healthy:
		return Healthy
	case appstatus.Progressing, "":
		return Progressing
	}
	return Degraded
}

// Worst is the worse of two classes (Failed > Degraded > Progressing >
// Healthy); an unknown class counts as Failed.
func Worst(a, b string) string {
	if rankOf(b) > rankOf(a) {
		return b
	}
	return a
}

func rankOf(c string) int {
	if r, ok := rank[c]; ok {
		return r
	}
	return rank[Failed]
}
