package step

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/deployctl/deployctl/internal/atomicfile"
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

// resultMark is how every result file starts: the header's first member.
const resultMark = "{\n  \"command\": "

// writeResult writes v as indented JSON, atomically (temp file + rename) so a
// reader never sees half a file, creating its folder. A file at path that
// is not a result (another program's) is never replaced.
func writeResult(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	if err := atomicfile.Write(path, append(data, '\n'), resultMark); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return nil
}
