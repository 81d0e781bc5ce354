package livestate_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/livestate/livestatetest"
)

// The failed deploy run the executor, insight and explain are tested on
// (kept once, in package livestatetest): its tasks are the five
// nodes of the minimal platform's DAG, attempts left out, and the failed
// task's result comes from its pod attempt, since the Retry node has none.
func TestFailedDeployFixture(t *testing.T) {
	wf := livestatetest.FailedDeploy(t)
	tasks := livestate.TaskNodes(wf)
	var names []string
	for name := range tasks {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"base", "cert-manager", "database", "ingress-nginx", "web"}; !slices.Equal(names, want) {
		t.Fatalf("task nodes %v, want %v", names, want)
	}
	db := tasks["database"]
	if db.Phase != wfv1.NodeFailed || db.Outputs != nil {
		t.Fatalf("database: phase %s, outputs %v; want a Failed Retry node without outputs", db.Phase, db.Outputs)
	}
	r := livestate.ResultOf(wf, db)
	if r == nil || r.Outcome != "Failed" || r.Health != "Degraded" || len(r.DegradedResources) != 1 || r.DegradedResources[0].Resource != "StatefulSet app/database" {
		t.Errorf("database's result %+v", r)
	}
	if r := livestate.ResultOf(wf, tasks["web"]); r != nil {
		t.Errorf("web never ran, yet has result %+v", r)
	}
}

// A run whose nodes Argo compressed (status.compressedNodes) reads, once
// hydrated, as the run itself; a hydrated or plain run is left as it is,
// and a compressedNodes that is not gzip is an error naming the run.
func TestHydrate(t *testing.T) {
	w := livestatetest.FailedDeploy(t)
	z := livestatetest.Compressed(t, w)
	if len(livestate.TaskNodes(z)) != 0 {
		t.Fatal("a compressed run has no nodes to read before it is hydrated")
	}
	if err := livestate.Hydrate(z); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(z.Status.Nodes, w.Status.Nodes) || z.Status.CompressedNodes != "" {
		t.Error("hydrated nodes differ from the run's")
	}
	if err := livestate.Hydrate(z); err != nil || !reflect.DeepEqual(z.Status.Nodes, w.Status.Nodes) {
		t.Errorf("hydrating twice: %v", err)
	}
	bad := w.DeepCopy()
	bad.Status.Nodes, bad.Status.CompressedNodes = nil, "bm90IGd6aXA="
	if err := livestate.Hydrate(bad); err == nil || !strings.Contains(err.Error(), w.Name) {
		t.Errorf("not gzip: %v", err)
	}
}
