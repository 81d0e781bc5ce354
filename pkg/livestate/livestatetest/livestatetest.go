// Package livestatetest holds the recorded Argo Workflows runs that every
// reader of a run is tested on (pkg/livestate, the executor and its
// internal/workflow, pkg/insight, explain), kept once, and reads them. Only
// tests import it.
package livestatetest

import (
	"embed"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"sigs.k8s.io/yaml"
)

//go:embed testdata/*.yaml
var runs embed.FS

// failedDeployYAML is testdata/failed-deploy.yaml: a finished deploy run of
// examples/minimal.yaml that failed at database (see the file's header).
func failedDeployYAML(t testing.TB) []byte {
	t.Helper()
	data, err := runs.ReadFile("testdata/failed-deploy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// FailedDeploy is that run as a Workflow, decoded strictly: a field Argo
// does not know is a mistake in the fixture.
func FailedDeploy(t testing.TB) *wfv1.Workflow {
	t.Helper()
	var wf wfv1.Workflow
	if err := yaml.UnmarshalStrict(failedDeployYAML(t), &wf); err != nil {
		t.Fatal(err)
	}
	return &wf
}
