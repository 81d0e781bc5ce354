package executor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/internal/fssnap"
)

// invalidRun is a run that stops at its configuration: it writes the
// report and the metrics and touches no cluster.
func invalidRun(t *testing.T, env map[string]string) string {
	t.Helper()
	env["ENVIRONMENT"] = ""
	var stdout, stderr bytes.Buffer
	if err := execute(context.Background(), options(t, ActionDeploy), lookup(env), &stdout, &stderr); err == nil {
		t.Fatal("want a failure")
	}
	return stderr.String()
}

// The next run replaces the report and metrics of the last: the marks
// the writer recognises them by are what they start with.
func TestNextRunReplacesReportAndMetrics(t *testing.T) {
	env := baseEnv(t)
	for range 2 {
		if stderr := invalidRun(t, env); strings.Contains(stderr, "cannot write") {
			t.Fatal(stderr)
		}
	}
	for _, f := range []string{"deployctl-report.json", "deployctl-metrics.prom"} {
		if b, err := os.ReadFile(filepath.Join(env["REPORT_DIR"], f)); err != nil || len(b) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A report or metrics path that is a user's file or a link is not
// replaced; the run says so.
func TestRunNeverReplacesFilesItDidNotWrite(t *testing.T) {
	env := baseEnv(t)
	dir := env["REPORT_DIR"]
	if err := os.WriteFile(filepath.Join(dir, "deployctl-report.json"), []byte(`{"mine": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "deployctl-metrics.prom")); err != nil {
		t.Fatal(err)
	}
	before := fssnap.Take(t, dir)
	stderr := invalidRun(t, env)
	for _, want := range []string{"cannot write the report", "deployctl-report.json: exists and was not written by this command", "cannot write the metrics", "deployctl-metrics.prom: is a symbolic link"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	fssnap.Same(t, before, fssnap.Take(t, dir))
}
