package stepresult

import (
	"fmt"
	"time"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/exitcode"

	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

// Outcome is the word the result file uses for an exit code.
func Outcome(code int) string {
	switch code {
	case exitcode.OK:
		return "Succeeded"
	case exitcode.Failure:
		return "Failed"
	case exitcode.Partial:
		return "Partial"
	case exitcode.Invalid:
		return "InvalidArguments"
	case exitcode.Timeout:
		return "Timeout"
	case exitcode.Transient:
		return "Transient"
	}
	return "Failed"
}

// Header is common to every command's result.
type Header struct {
	Command         string    `json:"command"`
	Outcome         string    `json:"outcome"`
	ExitCode        int       `json:"exitCode"`
	Message         string    `json:"message"`
	APICalls        int64     `json:"apiCalls"`
	StartedAt       time.Time `json:"startedAt"`
	FinishedAt      time.Time `json:"finishedAt"`
	DurationSeconds float64   `json:"durationSeconds"`
}

// NewHeader starts the result of command now.
func NewHeader(command string) Header {
	return Header{Command: command, StartedAt: time.Now().UTC()}
}

// Finish records the outcome: the exit code, the error's (redacted)
// message, the API calls made and the time taken.
func (h *Header) Finish(code int, err error, calls int64) {
	h.ExitCode = code
	h.Outcome = Outcome(code)
	if err != nil {
		h.Message = redact.String(err.Error())
	}
	h.APICalls = calls
	h.FinishedAt = time.Now().UTC()
	h.DurationSeconds = Seconds(h.FinishedAt.Sub(h.StartedAt))
}

// Seconds is d in seconds, to the millisecond.
func Seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// Issue names a resource and what is wrong with it.
type Issue struct {
	Resource  string `json:"resource"` // "Kind namespace/name", as kubectl prints it
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    string `json:"status,omitempty"`
	Message   string `json:"message,omitempty"`
}

func (i Issue) String() string { return Finding{i.Resource, i.Status, i.Message}.String() }

// CheckResult is one extra check's line.
type CheckResult struct {
	Check    string `json:"check"`
	Passed   bool   `json:"passed"`
	Attempts int    `json:"attempts"`
	Detail   string `json:"detail,omitempty"`
}

// SyncResult is the result file of sync-and-wait.
type SyncResult struct {
	Header
	App               string           `json:"app"`
	AppNamespace      string           `json:"appNamespace,omitempty"`
	Created           bool             `json:"created"`
	SyncID            string           `json:"syncID,omitempty"`
	SyncRevision      string           `json:"syncRevision,omitempty"`
	OperationPhase    string           `json:"operationPhase,omitempty"`
	Health            appstatus.Health `json:"health,omitempty"`
	HealthMessage     string           `json:"healthMessage,omitempty"`
	SyncStatus        appstatus.Sync   `json:"syncStatus,omitempty"`
	Messages          []string         `json:"messages,omitempty"`
	FailingResources  []Issue          `json:"failingResources,omitempty"`
	DegradedResources []Issue          `json:"degradedResources,omitempty"`
	Checks            []CheckResult    `json:"checks,omitempty"`
	Timings           SyncTimings      `json:"timings"`
}

// SyncTimings are taken on the step's clock.
type SyncTimings struct {
	StartedAt       time.Time  `json:"startedAt"`
	SyncRequestedAt *time.Time `json:"syncRequestedAt,omitempty"`
	SyncFinishedAt  *time.Time `json:"syncFinishedAt,omitempty"`
	HealthyAt       *time.Time `json:"healthyAt,omitempty"`
	FinishedAt      time.Time  `json:"finishedAt"`
	SyncSeconds     float64    `json:"syncSeconds"`   // sync requested → our operation finished
	HealthSeconds   float64    `json:"healthSeconds"` // operation finished → fresh Healthy
	TotalSeconds    float64    `json:"totalSeconds"`
}

// Note adds a line to Messages.
func (r *SyncResult) Note(format string, args ...any) {
	r.Messages = append(r.Messages, fmt.Sprintf(format, args...))
}

// Finish records the outcome and the timings.
func (r *SyncResult) Finish(code int, err error, calls int64) {
	r.Header.Finish(code, err, calls)
	t := &r.Timings
	t.StartedAt, t.FinishedAt = r.StartedAt, r.FinishedAt
	t.TotalSeconds = r.DurationSeconds
	if t.SyncRequestedAt != nil && t.SyncFinishedAt != nil {
		t.SyncSeconds = Seconds(t.SyncFinishedAt.Sub(*t.SyncRequestedAt))
	}
	if t.SyncFinishedAt != nil && t.HealthyAt != nil {
		t.HealthSeconds = Seconds(t.HealthyAt.Sub(*t.SyncFinishedAt))
	}
}

// ValidateResult is the result file of validate.
type ValidateResult struct {
	Header
	Aggregate string      `json:"aggregate"`
	Apps      []AppHealth `json:"apps"`
}

// AppHealth is one application's line of validate.
type AppHealth struct {
	App            string           `json:"app"`
	Verdict        string           `json:"verdict"` // its contribution to the aggregate
	Health         appstatus.Health `json:"health,omitempty"`
	HealthMessage  string           `json:"healthMessage,omitempty"`
	SyncStatus     appstatus.Sync   `json:"syncStatus,omitempty"`
	SyncRevision   string           `json:"syncRevision,omitempty"`
	OperationPhase string           `json:"operationPhase,omitempty"`
	Error          string           `json:"error,omitempty"`
}

// TeardownResult is the result file of teardown.
type TeardownResult struct {
	Header
	App       string `json:"app"`
	Platform  string `json:"platform"`
	PVPolicy  string `json:"pvPolicy"`
	CRDPolicy string `json:"crdPolicy"`
	// NothingToDo: the application was already gone.
	NothingToDo bool `json:"nothingToDo"`
	// Managed: what the application managed when teardown began.
	Managed []string `json:"managed,omitempty"`
	// Orphans: resources left in the cluster that belonged to the app.
	Orphans []Issue `json:"orphans,omitempty"`
	// RetainedPVCs: claims of StatefulSet volumeClaimTemplates kept under
	// pv-policy retain (Argo CD never deletes them: they are not manifests).
	RetainedPVCs []string `json:"retainedPVCs,omitempty"`
	// DeletedPVCs: such claims deleted under pv-policy delete.
	DeletedPVCs []string `json:"deletedPVCs,omitempty"`
	// RetainedCRDs: CustomResourceDefinitions the app manages, kept under
	// crd-policy retain (Argo CD never cascades to CRDs).
	RetainedCRDs []string `json:"retainedCRDs,omitempty"`
	// DeletedCRDs: such CRDs deleted under crd-policy delete.
	DeletedCRDs []string `json:"deletedCRDs,omitempty"`
}
