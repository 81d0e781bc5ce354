// Package appstatus is Argo CD's words for an Application's (or a
// resource's) health and sync status, typed once for every package that
// reads or writes them: the step's API types (pkg/step/argocd), its result
// file (pkg/stepresult), the aggregate (pkg/step/aggregate), livestate,
// insight, the executor and its report. gitops-engine's
// health.HealthStatusCode and argo-cd's SyncStatusCode are the model;
// pkg/step/argocd's contract test holds the values to theirs. No imports
// at all, so anything may import it (pkg/step stays standard library
// only).
package appstatus

// Health is an application's or resource's health.
type Health string

// Health codes Argo CD reports.
const (
	Healthy     Health = "Healthy"
	Progressing Health = "Progressing"
	Degraded    Health = "Degraded"
	Suspended   Health = "Suspended"
	Missing     Health = "Missing"
	Unknown     Health = "Unknown"
)

// Healths are every health code, in the order above.
func Healths() []Health {
	return []Health{Healthy, Progressing, Degraded, Suspended, Missing, Unknown}
}

// Sync is the comparison result between Git and the cluster.
type Sync string

// Sync status codes.
const (
	Synced      Sync = "Synced"
	OutOfSync   Sync = "OutOfSync"
	SyncUnknown Sync = "Unknown"
)
