// Package livestatetest holds the recorded Argo Workflows runs that every
// reader of a run is tested on (pkg/livestate, the executor and its
// internal/workflow, pkg/insight, explain), kept once, and reads them. Only
// tests import it.
package livestatetest

import (
	"embed"
	"encoding/json"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/packer"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/internal/safeyaml"
)

//go:embed testdata/*.yaml
var runs embed.FS

// failedDeployYAML is testdata/failed-deploy.yaml: a finished deploy run of
// examples/minimal.yaml that failed at database (see the file's header).
func failedDeployYAML(t testing.TB) []byte {
	t.Helper()
	return read(t, "failed-deploy.yaml")
}

func read(t testing.TB, file string) []byte {
	t.Helper()
	data, err := runs.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// FailedDeploy is that run as a Workflow, decoded strictly: a field Argo
// does not know is a mistake in the fixture.
func FailedDeploy(t testing.TB) *wfv1.Workflow {
	t.Helper()
	return decode(t, failedDeployYAML(t))
}

// NoPluginDeploy is testdata/no-plugin-deploy.yaml: a plugin-mode deploy
// run of examples/minimal.yaml whose first nodes failed with Argo's "no
// plugin executed the template" (see the file's header).
func NoPluginDeploy(t testing.TB) *wfv1.Workflow {
	t.Helper()
	return decode(t, read(t, "no-plugin-deploy.yaml"))
}

func decode(t testing.TB, data []byte) *wfv1.Workflow {
	t.Helper()
	var wf wfv1.Workflow
	if err := safeyaml.UnmarshalJSON(data, &wf, yaml.DisallowUnknownFields); err != nil {
		t.Fatal(err)
	}
	return &wf
}

// Compressed is w as Argo's controller writes a run whose object would
// pass the maximum size (MAX_WORKFLOW_SIZE, 1 MiB): its nodes gzipped into
// status.compressedNodes (workflow/packer, with a maximum just under w's
// size), status.nodes empty.
func Compressed(t testing.TB, w *wfv1.Workflow) *wfv1.Workflow {
	t.Helper()
	w = w.DeepCopy()
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	defer packer.SetMaxWorkflowSize(len(b) - 1)()
	if err := packer.CompressWorkflowIfNeeded(w); err != nil || w.Status.CompressedNodes == "" || len(w.Status.Nodes) != 0 {
		t.Fatalf("compressing %s: %v", w.Name, err)
	}
	return w
}
