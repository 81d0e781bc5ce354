package receiver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// argoCDValidateEnv names the argocdvalidate binary (test/e2e/tools/
// argocd-v3.6/cmd/argocdvalidate: Argo CD v3.6.1's own create-time Go
// validation, which needs Go 1.27 and its own module, so it cannot be
// linked here). `make e2e-validate` builds it and sets it.
const argoCDValidateEnv = "DEPLOYCTL_ARGOCDVALIDATE"

// argoCDGoRefuses runs Argo CD's create-time Go validation on every object
// at once (one process): per object, what it refuses. nil when the binary
// is not given: the CRD and apimachinery still judge, and the test says
// that Argo CD's Go validation did not.
func argoCDGoRefuses(t *testing.T, objs []map[string]any) [][]string {
	t.Helper()
	bin := os.Getenv(argoCDValidateEnv)
	if bin == "" {
		t.Logf("Argo CD's create-time Go validation not run: %s is not set (make e2e-validate sets it)", argoCDValidateEnv)
		return nil
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for i, o := range objs {
		if err := enc.Encode(map[string]any{"id": fmt.Sprint(i), "app": o}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	verdicts := make([][]string, len(objs))
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		var v struct {
			ID       string   `json:"id"`
			Refusals []string `json:"refusals"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v in %q", bin, err, sc.Text())
		}
		var i int
		if _, err := fmt.Sscan(v.ID, &i); err != nil || i < 0 || i >= len(objs) {
			t.Fatalf("%s: unknown id %q", bin, v.ID)
		}
		for _, r := range v.Refusals {
			verdicts[i] = append(verdicts[i], "Argo CD create: "+r)
		}
		n++
	}
	if n != len(objs) {
		t.Fatalf("%s: %d verdicts for %d Applications", bin, n, len(objs))
	}
	return verdicts
}

// Argo CD's create-time Go validation, when given, refuses what it must:
// the test of the harness (a binary that refuses nothing, or another
// program, fails here).
func TestArgoCDGoValidationRuns(t *testing.T) {
	if os.Getenv(argoCDValidateEnv) == "" {
		t.Skipf("%s is not set (make e2e-validate sets it)", argoCDValidateEnv)
	}
	good := variant([]string{"metadata", "name"}, "web", true)
	bad := variant([]string{"spec", "destination", "name"}, "in-cluster", true) // name and server both
	v := argoCDGoRefuses(t, []map[string]any{good, bad})
	if len(v[0]) > 0 {
		t.Errorf("base refused: %v", v[0])
	}
	if len(v[1]) == 0 {
		t.Errorf("destination with name and server not refused")
	}
}
