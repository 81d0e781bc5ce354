package livestate

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/packer"

	"github.com/deployctl/deployctl/internal/readlimit"
)

func gz(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// Hydrate reads what Argo's own packer writes, and stops a decompression
// bomb at readlimit.NodeStatus instead of inflating it.
func TestHydrate(t *testing.T) {
	wf := &wfv1.Workflow{}
	wf.Name = "w"
	wf.Status.Nodes = wfv1.Nodes{"w-1": {ID: "w-1", Name: "w.a", Phase: wfv1.NodeSucceeded}}
	if err := packer.CompressWorkflowIfNeeded(wf); err != nil {
		t.Fatal(err)
	}
	// Below Argo's 1 MiB the packer leaves the nodes; compress them as it does above.
	if wf.Status.CompressedNodes == "" {
		wf.Status.CompressedNodes = gz(t, []byte(`{"w-1":{"id":"w-1","name":"w.a","phase":"Succeeded"}}`))
		wf.Status.Nodes = nil
	}
	if err := Hydrate(wf); err != nil {
		t.Fatal(err)
	}
	if n := wf.Status.Nodes["w-1"]; n.Name != "w.a" || n.Phase != wfv1.NodeSucceeded || wf.Status.CompressedNodes != "" {
		t.Fatalf("hydrated: %+v, compressed %q", wf.Status.Nodes, wf.Status.CompressedNodes)
	}

	bomb := &wfv1.Workflow{}
	bomb.Name = "bomb"
	bomb.Status.CompressedNodes = gz(t, append([]byte(`{"x":`), bytes.Repeat([]byte(" "), int(readlimit.NodeStatus))...))
	err := Hydrate(bomb)
	if !readlimit.IsTooLarge(err) || !strings.Contains(err.Error(), "workflow bomb: reading status.compressedNodes") {
		t.Fatalf("a bomb of %d KB gzip: got %v, want the NodeStatus limit", len(bomb.Status.CompressedNodes)>>10, err)
	}

	bad := &wfv1.Workflow{}
	bad.Status.CompressedNodes = "not gzip"
	if err := Hydrate(bad); err == nil {
		t.Fatal("not gzip: no error")
	}
}
