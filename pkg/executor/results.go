package executor

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// stepResult is the in-step binary's result JSON (docs/step-contract.md),
// each node's output parameter `result`: the union of the fields of its
// three commands that the executor reports.
type stepResult struct {
	Command  string `json:"command"`
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exitCode"`
	Message  string `json:"message"`
	// sync-and-wait
	App               string          `json:"app,omitempty"`
	Created           bool            `json:"created,omitempty"`
	Health            string          `json:"health,omitempty"`
	HealthMessage     string          `json:"healthMessage,omitempty"`
	SyncStatus        string          `json:"syncStatus,omitempty"`
	OperationPhase    string          `json:"operationPhase,omitempty"`
	FailingResources  []resourceIssue `json:"failingResources,omitempty"`
	DegradedResources []resourceIssue `json:"degradedResources,omitempty"`
	Checks            []struct {
		Check  string `json:"check"`
		Passed bool   `json:"passed"`
		Detail string `json:"detail,omitempty"`
	} `json:"checks,omitempty"`
	// teardown
	NothingToDo  bool            `json:"nothingToDo,omitempty"`
	Orphans      []resourceIssue `json:"orphans,omitempty"`
	RetainedPVCs []string        `json:"retainedPVCs,omitempty"`
	DeletedPVCs  []string        `json:"deletedPVCs,omitempty"`
	RetainedCRDs []string        `json:"retainedCRDs,omitempty"`
	DeletedCRDs  []string        `json:"deletedCRDs,omitempty"`
}

// resourceIssue is one resource the step names, and what is wrong with it.
type resourceIssue struct {
	Resource string `json:"resource"`
	Status   string `json:"status,omitempty"`
	Message  string `json:"message,omitempty"`
}

func (i resourceIssue) String() string {
	s := i.Resource
	switch {
	case i.Status != "" && i.Message != "":
		s += " (" + i.Status + ": " + i.Message + ")"
	case i.Status != "":
		s += " (" + i.Status + ")"
	case i.Message != "":
		s += " (" + i.Message + ")"
	}
	return s
}

// diagnostics are the result's lines worth showing for a failure.
func (s *stepResult) diagnostics() []string {
	if s == nil {
		return nil
	}
	var out []string
	if s.Message != "" {
		out = append(out, fmt.Sprintf("step %s exit %d (%s): %s", s.Command, s.ExitCode, s.Outcome, s.Message))
	}
	if s.Health != "" {
		l := "Argo CD health " + s.Health
		if s.HealthMessage != "" {
			l += ": " + s.HealthMessage
		}
		if s.SyncStatus != "" {
			l += ", sync " + s.SyncStatus
		}
		if s.OperationPhase != "" {
			l += ", operation " + s.OperationPhase
		}
		out = append(out, l)
	}
	for _, r := range s.FailingResources {
		out = append(out, "sync failed for "+r.String())
	}
	for _, r := range s.DegradedResources {
		out = append(out, "unhealthy "+r.String())
	}
	for _, c := range s.Checks {
		if !c.Passed {
			out = append(out, "check "+c.Check+" failed: "+c.Detail)
		}
	}
	for _, r := range s.Orphans {
		out = append(out, "orphan "+r.String())
	}
	return out
}

// taskNodes maps each task of the workflow's top-level DAG to its node:
// the Retry node for tasks with a retryStrategy (its children are the
// attempts), the Pod or Suspend node otherwise.
func taskNodes(wf *wfv1.Workflow) map[string]*wfv1.NodeStatus {
	out := map[string]*wfv1.NodeStatus{}
	for id := range wf.Status.Nodes {
		n := wf.Status.Nodes[id]
		if n.DisplayName == "" || strings.ContainsAny(n.DisplayName, "().") || n.Name != wf.Name+"."+n.DisplayName {
			continue
		}
		out[n.DisplayName] = &n
	}
	return out
}

// attempts are a task node's pod attempts, oldest first.
func attempts(wf *wfv1.Workflow, n *wfv1.NodeStatus) []*wfv1.NodeStatus {
	if n.Type != wfv1.NodeTypeRetry {
		return []*wfv1.NodeStatus{n}
	}
	var out []*wfv1.NodeStatus
	for _, id := range n.Children {
		if c, ok := wf.Status.Nodes[id]; ok {
			c := c
			out = append(out, &c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(&out[j].StartedAt) })
	return out
}

// resultOf parses a task's step result: the task node's own output, else
// the last attempt that wrote one (a failed Retry node has none itself).
func resultOf(wf *wfv1.Workflow, n *wfv1.NodeStatus) *stepResult {
	cands := []*wfv1.NodeStatus{n}
	as := attempts(wf, n)
	for i := len(as) - 1; i >= 0; i-- {
		cands = append(cands, as[i])
	}
	for _, c := range cands {
		if c.Outputs == nil {
			continue
		}
		for _, p := range c.Outputs.Parameters {
			if p.Name != "result" || p.Value == nil {
				continue
			}
			var r stepResult
			if err := json.Unmarshal([]byte(p.Value.String()), &r); err == nil && r.Command != "" {
				return &r
			}
		}
	}
	return nil
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
