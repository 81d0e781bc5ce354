package plan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/resdeps"
)

// The command's work runs without cobra: the plan on stdout, and every
// argument problem in one pass with exit 3.
func TestCommandRun(t *testing.T) {
	var out, errs bytes.Buffer
	c := Command{File: "../../examples/minimal.yaml", Scope: "platform", Output: "text", Action: "deploy"}
	if err := c.Run(t.Context(), &out, &errs); err != nil || !strings.Contains(out.String(), "Critical path") {
		t.Fatalf("%v\n%s", err, out.String())
	}
	c = Command{File: "absent.yaml", Scope: "app:x", Output: "text", Action: "deploy", WavesFile: "w.yaml", ExplainEdges: true,
		Inventory: resdeps.SourceConfig{Manifests: "testdata", Live: true}}
	err := c.Run(t.Context(), &out, &errs)
	if exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("exit %d: %v", exitcode.Of(err), err)
	}
	for _, want := range []string{"--waves and --durations go with --compare-waves", "--explain-edges checks the whole platform",
		"two sources of the same inventory", "absent.yaml"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from:\n%v", want, err)
		}
	}
}
