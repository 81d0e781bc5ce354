package step

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// The result file is the step's output parameter `result` (JSON, the types
// of package stepresult). It is written for every outcome, failures
// included, so the workflow always has something to report.

func issue(ref argocd.ResourceRef, status, message string) stepresult.Issue {
	return stepresult.Issue{Resource: ref.String(), Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace,
		Name: ref.Name, Status: status, Message: message}
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
