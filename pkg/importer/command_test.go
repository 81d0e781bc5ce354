package importer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/resdeps"
)

// The command's work runs without cobra: the spec on stdout, the summary
// on stderr; every argument problem in one pass with exit 3, nothing read.
func TestCommandRun(t *testing.T) {
	var out, errs bytes.Buffer
	c := Command{Paths: []string{"testdata/rfc"}, StackFrom: "parent", Options: Options{WorkflowNamespace: DefaultWorkflowNamespace, ServiceAccount: DefaultServiceAccount}}
	if err := c.Run(t.Context(), nil, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), Mark) || !strings.Contains(out.String(), "name: platform") || !strings.Contains(errs.String(), "imported ") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out.String(), errs.String())
	}
	c = Command{Paths: []string{"testdata/absent"}, StackFrom: "owner", Options: Options{Name: "Not_A_Label", PruneUnexplained: true},
		Inventory: resdeps.SourceConfig{Manifests: "testdata/rfc-manifests", Live: true}}
	err := c.Run(t.Context(), nil, &out, &errs)
	if exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("exit %d: %v", exitcode.Of(err), err)
	}
	for _, want := range []string{"owner", "Not_A_Label", "two sources of the same inventory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "absent") {
		t.Errorf("inputs read before the arguments were right:\n%v", err)
	}
}
