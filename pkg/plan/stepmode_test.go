package plan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// The plan says when steps run in the executor plugin, and what that needs;
// a pod-mode plan is as it was (no line, no JSON field).
func TestPlanNamesPluginMode(t *testing.T) {
	d, err := dag.Load("testdata/chain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	render := func(format string) string {
		p, err := Make(d, "", dag.Deploy)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := p.Write(&b, format); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if text, js := render("text"), render("json"); strings.Contains(text, "plugin") || strings.Contains(js, "stepMode") {
		t.Errorf("pod mode mentions the plugin:\n%s\n%s", text, js)
	}
	d.Platform.Spec.Workflow.StepMode = spec.StepModePlugin
	if text := render("text"); !strings.Contains(text, "Steps run in the deployctl executor plugin") || !strings.Contains(text, "ARGO_EXECUTOR_PLUGINS=true") {
		t.Errorf("plugin mode not named:\n%s", text)
	}
	if js := render("json"); !strings.Contains(js, `"stepMode": "plugin"`) {
		t.Errorf("plugin mode not in the JSON:\n%s", js)
	}
}
