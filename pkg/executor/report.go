package executor

import (
	"path/filepath"
	"sort"

	"github.com/deployctl/deployctl/pkg/report"
)

// newReport starts the report of the action, with the configuration as
// understood (package report has the format).
func newReport(c *Config, action Action) *report.Report {
	r := report.New(action)
	if c == nil {
		return r
	}
	r.Environment, r.Scope, r.DryRun, r.TraceID, r.SpanID = c.Environment, c.Scope, c.DryRun, c.TraceID, c.SpanID
	if c.DAG != nil {
		r.Platform = c.Platform()
	}
	cr := &report.ConfigReport{Kubeconfig: c.KubeconfigSource, Context: c.Context, Cluster: c.Cluster, ConfigDir: c.ConfigDir,
		Environment: c.Env, Overrides: c.Overrides}
	for n := range c.secrets {
		cr.Secrets = append(cr.Secrets, filepath.Join(c.SecretsDir, n))
	}
	sort.Strings(cr.Secrets)
	r.Configuration = cr
	return r
}
