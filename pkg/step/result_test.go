package step

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/stepresult"
)

// The result file replaces an earlier result, creates its folder, and never
// replaces a file the step did not write.
func TestWriteResult(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out", "result.json")
	h := stepresult.NewHeader("validate")
	if err := writeResult(path, &h); err != nil {
		t.Fatal(err)
	}
	h.Finish(0, nil, 3)
	if err := writeResult(path, &stepresult.ValidateResult{Header: h, Aggregate: "Healthy"}); err != nil {
		t.Fatalf("replacing an earlier result: %v", err)
	}
	data, _ := os.ReadFile(path)
	var got stepresult.ValidateResult
	if err := json.Unmarshal(data, &got); err != nil || got.Aggregate != "Healthy" || got.APICalls != 3 {
		t.Errorf("result %s (%v)", data, err)
	}
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeResult(foreign, &h); err == nil || !strings.Contains(err.Error(), "was not written by this command") {
		t.Errorf("a foreign file: %v", err)
	}
	if data, _ := os.ReadFile(foreign); string(data) != "precious\n" {
		t.Errorf("the foreign file was changed: %q", data)
	}
}
