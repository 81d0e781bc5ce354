package stepresult

import (
	"fmt"
	"strings"
	"time"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/aggregate"
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

// Summary is the step's one line on stdout.
func (h *Header) Summary() string {
	return fmt.Sprintf("%s: %s (exit %d): %s", h.Command, h.Outcome, h.ExitCode, h.Message)
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
	App               string        `json:"app"`
	AppNamespace      string        `json:"appNamespace,omitempty"`
	Created           bool          `json:"created"`
	SyncID            string        `json:"syncID,omitempty"`
	SyncRevision      string        `json:"syncRevision,omitempty"`
	OperationPhase    string        `json:"operationPhase,omitempty"`
	Health            string        `json:"health,omitempty"`
	HealthMessage     string        `json:"healthMessage,omitempty"`
	SyncStatus        string        `json:"syncStatus,omitempty"`
	Messages          []string      `json:"messages,omitempty"`
	FailingResources  []Issue       `json:"failingResources,omitempty"`
	DegradedResources []Issue       `json:"degradedResources,omitempty"`
	Checks            []CheckResult `json:"checks,omitempty"`
	Timings           SyncTimings   `json:"timings"`
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

// Summary is the step's one line on stdout.
func (r *SyncResult) Summary() string {
	if r.ExitCode != exitcode.OK {
		return fmt.Sprintf("sync-and-wait %s: %s (exit %d): %s", r.App, strings.ToUpper(r.Outcome), r.ExitCode, r.Message)
	}
	rev := r.SyncRevision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return fmt.Sprintf("sync-and-wait %s: %s at revision %s (sync %.1fs, healthy %.1fs after it, %d checks passed)",
		r.App, r.Health, rev, r.Timings.SyncSeconds, r.Timings.HealthSeconds, len(r.Checks))
}

// ValidateResult is the result file of validate.
type ValidateResult struct {
	Header
	Aggregate string      `json:"aggregate"`
	Apps      []AppHealth `json:"apps"`
}

// AppHealth is one application's line of validate.
type AppHealth struct {
	App            string `json:"app"`
	Verdict        string `json:"verdict"` // its contribution to the aggregate
	Health         string `json:"health,omitempty"`
	HealthMessage  string `json:"healthMessage,omitempty"`
	SyncStatus     string `json:"syncStatus,omitempty"`
	SyncRevision   string `json:"syncRevision,omitempty"`
	OperationPhase string `json:"operationPhase,omitempty"`
	Error          string `json:"error,omitempty"`
}

// Summary is the step's one line on stdout.
func (r *ValidateResult) Summary() string {
	if len(r.Apps) == 0 {
		return r.Header.Summary() // nothing was read: invalid arguments
	}
	counts := map[string]int{}
	for _, a := range r.Apps {
		counts[a.Verdict]++
	}
	var parts []string
	for _, v := range []string{aggregate.Healthy, aggregate.Progressing, aggregate.Degraded, aggregate.Failed} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	s := fmt.Sprintf("validate: %s (%s)", r.Aggregate, strings.Join(parts, ", "))
	if r.ExitCode != exitcode.OK {
		s += fmt.Sprintf(" (exit %d): %s", r.ExitCode, r.Message)
	}
	return s
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

// Summary is the step's one line on stdout.
func (r *TeardownResult) Summary() string {
	switch {
	case r.ExitCode != exitcode.OK:
		return fmt.Sprintf("teardown %s: %s (exit %d): %s", r.App, strings.ToUpper(r.Outcome), r.ExitCode, r.Message)
	case r.NothingToDo:
		return fmt.Sprintf("teardown %s: nothing to do, the application does not exist", r.App)
	}
	return fmt.Sprintf("teardown %s: deleted with its %d managed resources, no orphans (%d PVCs retained, %d deleted; %d CRDs retained, %d deleted)",
		r.App, len(r.Managed), len(r.RetainedPVCs), len(r.DeletedPVCs), len(r.RetainedCRDs), len(r.DeletedCRDs))
}
