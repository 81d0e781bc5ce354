package step

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// The result file is the step's output parameter `result` (JSON). It is
// written for every outcome, failures included, so the workflow always has
// something to report.

// header is common to every command's result.
type header struct {
	Command         string    `json:"command"`
	Outcome         string    `json:"outcome"`
	ExitCode        int       `json:"exitCode"`
	Message         string    `json:"message"`
	APICalls        int64     `json:"apiCalls"`
	StartedAt       time.Time `json:"startedAt"`
	FinishedAt      time.Time `json:"finishedAt"`
	DurationSeconds float64   `json:"durationSeconds"`
}

func (h *header) finish(code int, err error, calls int64) {
	h.ExitCode = code
	h.Outcome = outcomeName(code)
	if err != nil {
		h.Message = redact.String(err.Error())
	}
	h.APICalls = calls
	h.FinishedAt = time.Now().UTC()
	h.DurationSeconds = seconds(h.FinishedAt.Sub(h.StartedAt))
}

func newHeader(command string) header {
	return header{Command: command, StartedAt: time.Now().UTC()}
}

// resourceIssue names a resource and what is wrong with it.
type resourceIssue struct {
	Resource  string `json:"resource"` // "Kind namespace/name", as kubectl prints it
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Status    string `json:"status,omitempty"`
	Message   string `json:"message,omitempty"`
}

func issue(ref argocd.ResourceRef, status, message string) resourceIssue {
	return resourceIssue{Resource: ref.String(), Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace,
		Name: ref.Name, Status: status, Message: message}
}

func (i resourceIssue) String() string {
	s := i.Resource
	if i.Status != "" {
		s += " (" + i.Status
		if i.Message != "" {
			s += ": " + i.Message
		}
		s += ")"
	} else if i.Message != "" {
		s += " (" + i.Message + ")"
	}
	return s
}

func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// writeResult writes v as indented JSON, atomically (temp file + rename) so a
// reader never sees half a file.
func writeResult(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".result-*")
	if err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the result: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
