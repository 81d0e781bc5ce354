package stepresult

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

// Result is what a reader keeps of a step's result file: the outcome and
// what explains it. Its JSON is the `stepResult` of each component in
// deployctl's report, so its fields and their order are that contract.
type Result struct {
	Command  string `json:"command"`
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exitCode"`
	Message  string `json:"message"`
	// sync-and-wait
	App               string           `json:"app,omitempty"`
	Created           bool             `json:"created,omitempty"`
	Health            appstatus.Health `json:"health,omitempty"`
	HealthMessage     string           `json:"healthMessage,omitempty"`
	SyncStatus        appstatus.Sync   `json:"syncStatus,omitempty"`
	OperationPhase    string           `json:"operationPhase,omitempty"`
	FailingResources  []Finding        `json:"failingResources,omitempty"`
	DegradedResources []Finding        `json:"degradedResources,omitempty"`
	Checks            []Check          `json:"checks,omitempty"`
	// teardown
	NothingToDo  bool      `json:"nothingToDo,omitempty"`
	Orphans      []Finding `json:"orphans,omitempty"`
	RetainedPVCs []string  `json:"retainedPVCs,omitempty"`
	DeletedPVCs  []string  `json:"deletedPVCs,omitempty"`
	RetainedCRDs []string  `json:"retainedCRDs,omitempty"`
	DeletedCRDs  []string  `json:"deletedCRDs,omitempty"`
}

// Finding is what a reader keeps of an Issue: the resource as the step
// named it, and what is wrong with it.
type Finding struct {
	Resource string `json:"resource"`
	Status   string `json:"status,omitempty"`
	Message  string `json:"message,omitempty"`
}

func (f Finding) String() string {
	s := f.Resource
	switch {
	case f.Status != "" && f.Message != "":
		s += " (" + f.Status + ": " + f.Message + ")"
	case f.Status != "":
		s += " (" + f.Status + ")"
	case f.Message != "":
		s += " (" + f.Message + ")"
	}
	return s
}

// Check is what a reader keeps of a CheckResult.
type Check struct {
	Check  string `json:"check"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail,omitempty"`
}

// Parse reads a result file's content. Anything that is not a step's
// result (not JSON, or no command) is an error.
func Parse(data []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("reading a step result: %w", err)
	}
	if r.Command == "" {
		return nil, errors.New("reading a step result: no command")
	}
	return &r, nil
}

// Headline is the step's own account of a failure, "" without a message.
func (r *Result) Headline() string {
	if r == nil || r.Message == "" {
		return ""
	}
	return fmt.Sprintf("step %s exit %d (%s): %s", r.Command, r.ExitCode, r.Outcome, r.Message)
}

// Diagnostics are the result's lines worth showing for a failure beside
// its message: Argo CD's view at the end of the step, the resources that
// failed to sync or are unhealthy, the checks that failed and the orphans.
func (r *Result) Diagnostics() []string {
	if r == nil {
		return nil
	}
	var out []string
	if r.Health != "" {
		l := "Argo CD health " + string(r.Health)
		if r.HealthMessage != "" {
			l += ": " + r.HealthMessage
		}
		if r.SyncStatus != "" {
			l += ", sync " + string(r.SyncStatus)
		}
		if r.OperationPhase != "" {
			l += ", operation " + r.OperationPhase
		}
		out = append(out, l)
	}
	for _, f := range r.FailingResources {
		out = append(out, "sync failed for "+f.String())
	}
	for _, f := range r.DegradedResources {
		out = append(out, "unhealthy "+f.String())
	}
	for _, c := range r.Checks {
		if !c.Passed {
			out = append(out, "check "+c.Check+" failed: "+c.Detail)
		}
	}
	for _, f := range r.Orphans {
		out = append(out, "orphan "+f.String())
	}
	return out
}
