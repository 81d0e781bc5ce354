// Package report is the executor's status report (README "Report"): its
// JSON format, which readers such as `deployctl plan --durations` decode
// without linking the executor, and its text summary.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deployctl/deployctl/internal/atomicfile"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// Action is what the executor runs.
type Action string

// The executor's actions: the three of the contract, and preflight alone.
const (
	ActionDeploy    Action = "deploy"
	ActionValidate  Action = "validate"
	ActionTeardown  Action = "teardown"
	ActionPreflight Action = "preflight"
)

// Kind identifies the report format; bump the version on any
// incompatible change.
const Kind = "deployctl.dev/v1alpha1/ExecutorReport"

// Statuses of an action, in the report and the executor_action_status metric.
const (
	StatusRunning     = "Running"
	StatusSucceeded   = "Succeeded"
	StatusUpToDate    = "UpToDate" // deploy: nothing to do
	StatusFailed      = "Failed"
	StatusPartial     = "Partial"
	StatusInvalid     = "Invalid"
	StatusTimeout     = "Timeout"
	StatusInterrupted = "Interrupted"
)

// Statuses lists every action status, for the enum metric.
var Statuses = []string{StatusRunning, StatusSucceeded, StatusUpToDate, StatusFailed, StatusPartial, StatusInvalid, StatusTimeout, StatusInterrupted}

// Report is the structured status report of one action (RFC 7, docs/requirements.md#rfc-226-and-7-the-executor):
// summary, per-component status and health, failures with diagnostics,
// metrics, recommendations. It never holds a credential.
type Report struct {
	Kind            string        `json:"kind"`
	Action          Action        `json:"action"`
	Platform        string        `json:"platform,omitempty"`
	Environment     string        `json:"environment,omitempty"`
	Scope           string        `json:"scope,omitempty"`
	SpecHash        string        `json:"specHash,omitempty"`
	DryRun          bool          `json:"dryRun"`
	TraceID         string        `json:"traceID,omitempty"`
	SpanID          string        `json:"spanID,omitempty"`
	Status          string        `json:"status"`
	ExitCode        int           `json:"exitCode"`
	Summary         string        `json:"summary"`
	StartedAt       time.Time     `json:"startedAt"`
	FinishedAt      time.Time     `json:"finishedAt"`
	DurationSeconds float64       `json:"durationSeconds"`
	Timeout         string        `json:"timeout,omitempty"`
	Configuration   *ConfigReport `json:"configuration,omitempty"`
	Preflight       []Check       `json:"preflight,omitempty"`
	Inventory       *Inventory    `json:"clusterInventory,omitempty"`
	Applied         []Applied     `json:"applied,omitempty"`
	Workflow        *WorkflowRun  `json:"workflow,omitempty"`
	Health          string        `json:"aggregateHealth,omitempty"`
	Components      []Component   `json:"components,omitempty"`
	Failures        []Failure     `json:"failures,omitempty"`
	Metrics         ReportMetrics `json:"metrics"`
	Recommendations []string      `json:"recommendations,omitempty"`
	phaseStart      map[string]time.Time
}

// ConfigReport is the configuration as understood, without credentials:
// the kubeconfig is named by its source only, secrets by file name only.
type ConfigReport struct {
	Kubeconfig  string           `json:"kubeconfig,omitempty"`
	Context     string           `json:"context,omitempty"`
	Cluster     string           `json:"cluster,omitempty"`
	ConfigDir   string           `json:"configDir,omitempty"`
	Environment *EnvironmentFile `json:"environmentFile,omitempty"`
	Overrides   []string         `json:"overrides,omitempty"`
	Secrets     []string         `json:"secretFiles,omitempty"`
	Problems    []string         `json:"problems,omitempty"`
}

// WorkflowRun is the Argo Workflow the action ran, and why that one.
type WorkflowRun struct {
	Name       string     `json:"name,omitempty"`
	Namespace  string     `json:"namespace"`
	Decision   string     `json:"decision"`
	Reason     string     `json:"reason"`
	Phase      string     `json:"phase,omitempty"`
	Message    string     `json:"message,omitempty"`
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// ResetNodes are the nodes a resume runs again (failed, and never run).
	ResetNodes []string `json:"resetNodes,omitempty"`
	// KeptNodes succeeded in the resumed run and are not run again.
	KeptNodes []string `json:"keptNodes,omitempty"`
}

// Component is one app of the scope.
type Component struct {
	Name            string             `json:"name"`
	Stack           string             `json:"stack,omitempty"`
	Status          string             `json:"status"` // the node: Succeeded, Failed, Error, NotRun, Running, Kept, …
	Health          string             `json:"health,omitempty"`
	Sync            string             `json:"sync,omitempty"`
	Verdict         string             `json:"verdict,omitempty"`
	Message         string             `json:"message,omitempty"`
	Attempts        int                `json:"attempts,omitempty"`
	DurationSeconds float64            `json:"durationSeconds,omitempty"`
	StepResult      *stepresult.Result `json:"stepResult,omitempty"`
}

// Failure is one thing that went wrong, with what is known about it.
type Failure struct {
	Component   string   `json:"component"`
	Phase       string   `json:"phase"`
	Message     string   `json:"message"`
	Diagnostics []string `json:"diagnostics,omitempty"`
}

// ReportMetrics are the numbers of the run.
type ReportMetrics struct {
	DurationSeconds float64            `json:"durationSeconds"`
	PhaseSeconds    map[string]float64 `json:"phaseSeconds,omitempty"`
	Components      int                `json:"components"`
	ByStatus        map[string]int     `json:"componentsByStatus,omitempty"`
	ByHealth        map[string]int     `json:"componentsByHealth,omitempty"`
	Errors          map[string]int     `json:"errors,omitempty"`
	Applied         map[string]int     `json:"applied,omitempty"`
}

// Phase records the start of a phase; the previous one ends there.
func (r *Report) Phase(name string) {
	r.phaseStart[name] = time.Now()
}

func (r *Report) EndPhase(name string) {
	if t, ok := r.phaseStart[name]; ok {
		if r.Metrics.PhaseSeconds == nil {
			r.Metrics.PhaseSeconds = map[string]float64{}
		}
		r.Metrics.PhaseSeconds[name] = secondsSince(t)
	}
}

func (r *Report) Fail(component, phase, msg string, diag ...string) {
	r.Failures = append(r.Failures, Failure{Component: component, Phase: phase, Message: msg, Diagnostics: diag})
}

func (r *Report) Recommend(format string, args ...any) {
	r.Recommendations = append(r.Recommendations, fmt.Sprintf(format, args...))
}

// Finish sets the outcome and the totals.
func (r *Report) Finish(code int, status, summary string, errs map[string]int) {
	r.ExitCode, r.Status, r.Summary = code, status, summary
	r.FinishedAt = time.Now().UTC()
	r.DurationSeconds = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).Seconds()
	m := &r.Metrics
	m.DurationSeconds = r.DurationSeconds
	m.Components = len(r.Components)
	m.ByStatus, m.ByHealth = map[string]int{}, map[string]int{}
	for _, c := range r.Components {
		m.ByStatus[c.Status]++
		if c.Health != "" {
			m.ByHealth[c.Health]++
		}
	}
	m.Errors = errs
	if len(r.Applied) > 0 {
		m.Applied = CountResults(r.Applied)
	}
}

// StatusOf names an exit code.
func StatusOf(code int) string {
	switch code {
	case exitcode.OK:
		return StatusSucceeded
	case exitcode.Partial:
		return StatusPartial
	case exitcode.Invalid:
		return StatusInvalid
	case exitcode.Timeout:
		return StatusTimeout
	}
	return StatusFailed
}

// WriteJSON writes the report atomically (temp file + rename), so a
// reader never sees half a file.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), "{\n  \"kind\": \""+Kind+"\"")
}

// WriteText is the human summary.
func (r *Report) WriteText(w io.Writer) {
	what := "deployctl " + string(r.Action)
	if r.Platform != "" {
		what += " " + r.Platform
	}
	var ctx []string
	if r.Environment != "" {
		ctx = append(ctx, "environment "+r.Environment)
	}
	if r.Scope != "" {
		ctx = append(ctx, "scope "+r.Scope)
	}
	if r.DryRun {
		ctx = append(ctx, "DRY RUN")
	}
	if len(ctx) > 0 {
		what += " (" + strings.Join(ctx, ", ") + ")"
	}
	fmt.Fprintf(w, "\n%s: %s (exit %d) in %s\n", what, strings.ToUpper(r.Status), r.ExitCode, secondsText(r.DurationSeconds))
	fmt.Fprintf(w, "  %s\n", r.Summary)
	if cr := r.Configuration; cr != nil && len(cr.Problems) > 0 {
		fmt.Fprintln(w, "  configuration problems:")
		for _, p := range cr.Problems {
			fmt.Fprintf(w, "    - %s\n", p)
		}
	}
	if len(r.Preflight) > 0 {
		n := map[string]int{}
		for _, c := range r.Preflight {
			n[c.Status]++
		}
		fmt.Fprintf(w, "  preflight: %d pass, %d warn, %d fail, %d skipped\n", n[Pass], n[Warn], n[Fail], n[Skip])
		for _, c := range r.Preflight {
			if c.Status == Warn || c.Status == Fail || r.Action == ActionPreflight {
				fmt.Fprintf(w, "    %-4s %-15s %s\n", c.Status, c.Name, c.Reason)
			}
		}
	}
	if len(r.Applied) > 0 {
		n := CountResults(r.Applied)
		var parts []string
		for _, k := range []string{Created, Configured, Unchanged, WouldCreate, WouldConfigure} {
			if n[k] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
			}
		}
		fmt.Fprintf(w, "  applied %d objects: %s\n", len(r.Applied), strings.Join(parts, ", "))
		for _, a := range r.Applied {
			if a.Result != Unchanged || r.DryRun {
				fmt.Fprintf(w, "    %-16s %s\n", a.Result, ObjectName(a))
			}
		}
	}
	if wr := r.Workflow; wr != nil {
		name := wr.Name
		if name == "" {
			name = "(new)"
		}
		fmt.Fprintf(w, "  workflow %s/%s: %s (%s)", wr.Namespace, name, wr.Decision, wr.Reason)
		if wr.Phase != "" {
			fmt.Fprintf(w, ", %s", wr.Phase)
		}
		fmt.Fprintln(w)
		if len(wr.ResetNodes) > 0 {
			fmt.Fprintf(w, "    runs again: %s\n", strings.Join(wr.ResetNodes, ", "))
		}
		if len(wr.KeptNodes) > 0 {
			fmt.Fprintf(w, "    kept (not synced again): %s\n", strings.Join(wr.KeptNodes, ", "))
		}
	}
	if len(r.Components) > 0 {
		head := fmt.Sprintf("  components (%d)", len(r.Components))
		if r.Health != "" {
			head += ", aggregate health " + r.Health
		}
		fmt.Fprintln(w, head+":")
		for _, c := range r.Components {
			hs := orDash(c.Health) + "/" + orDash(c.Sync)
			line := fmt.Sprintf("    %-28s %-10s %-22s", c.Name, c.Status, hs)
			if c.DurationSeconds > 0 {
				line += fmt.Sprintf(" %7s", secondsText(c.DurationSeconds))
			}
			if c.Message != "" {
				line += "  " + c.Message
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	if len(r.Failures) > 0 {
		fmt.Fprintln(w, "  failures:")
		for _, f := range r.Failures {
			fmt.Fprintf(w, "    %s [%s]: %s\n", f.Component, f.Phase, f.Message)
			for _, d := range f.Diagnostics {
				fmt.Fprintf(w, "      - %s\n", d)
			}
		}
	}
	if len(r.Recommendations) > 0 {
		fmt.Fprintln(w, "  recommendations:")
		for _, rec := range r.Recommendations {
			fmt.Fprintf(w, "    - %s\n", rec)
		}
	}
}

// ObjectName is how the summary names an applied object: "Kind ns/name".
func ObjectName(a Applied) string {
	if a.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", a.Kind, a.Namespace, a.Name)
	}
	return a.Kind + " " + a.Name
}

func secondsText(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// New starts the report of an action now.
func New(action Action) *Report {
	return &Report{Kind: Kind, Action: action, Status: StatusRunning, StartedAt: time.Now().UTC(),
		phaseStart: map[string]time.Time{}}
}

func secondsSince(t time.Time) float64 {
	return float64(time.Since(t).Round(time.Millisecond)) / float64(time.Second)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
