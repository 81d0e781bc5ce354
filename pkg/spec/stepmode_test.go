package spec

import (
	"reflect"
	"strings"
	"testing"
)

// TestStepMode: spec.workflow.stepMode takes exactly pod or plugin; every
// other spelling is a located error, and pod (written or not) is one mode.
func TestStepMode(t *testing.T) {
	withMode := func(v string) string {
		return strings.Replace(base, "workflow: {image: example.com/deploystep:1}", "workflow: {image: example.com/deploystep:1, stepMode: "+v+"}", 1)
	}
	bad := `t.yaml:5: spec.workflow.stepMode: value must be one of "pod", "plugin"`
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"wrong case", withMode("Plugin"), []string{bad}},
		{"upper case", withMode("POD"), []string{bad}},
		{"empty", withMode(`""`), []string{bad}},
		{"null", withMode("null"), []string{bad}},
		{"unknown", withMode("sidecar"), []string{bad}},
		{"not a string", withMode("[plugin]"), []string{bad}},
		{"padded", withMode(`" plugin"`), []string{bad}},
		{"duplicate key", withMode("plugin, stepMode: pod"),
			[]string{`t.yaml:5: spec.workflow.stepMode: duplicate key "stepMode": already set at line 5; keep one`}},
		{"misspelt key", strings.Replace(base, "workflow: {image: example.com/deploystep:1}", "workflow: {image: example.com/deploystep:1, stepmode: plugin}", 1),
			[]string{`t.yaml:5: spec.workflow.stepmode: unknown field "stepmode" (did you mean "stepMode"?)`}},
		{"plugin's own service account", strings.Replace(withMode("plugin"), "stepMode: plugin", "stepMode: plugin, serviceAccount: deployctl-executor-plugin", 1),
			[]string{`t.yaml:5: spec.workflow.serviceAccount: "deployctl-executor-plugin" is the executor plugin's own ServiceAccount in plugin mode (it may only read workflows): name the workflows' another`}},
		{"token Secret name too long", strings.Replace(withMode("plugin"), "stepMode: plugin", "stepMode: plugin, serviceAccount: "+strings.Repeat("s", 240), 1),
			[]string{`t.yaml:5: spec.workflow.serviceAccount: "` + strings.Repeat("s", 240) + `": in plugin mode its token Secret "` + strings.Repeat("s", 240) + `.service-account-token" must be a valid Secret name: must be no more than 253 characters`}},
		{"long service account in pod mode", strings.Replace(withMode("pod"), "stepMode: pod", "stepMode: pod, serviceAccount: "+strings.Repeat("s", 240), 1), nil},
		{"pod", withMode("pod"), nil},
		{"plugin", withMode("plugin"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := messages(t, tc.src); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestStepModeNormalized: an explicit pod decodes to the default (""),
// so it compiles (and hashes) exactly like a spec without the field.
func TestStepModeNormalized(t *testing.T) {
	for src, want := range map[string]StepMode{
		base: StepModePod,
		strings.Replace(base, "deploystep:1}", "deploystep:1, stepMode: pod}", 1):    StepModePod,
		strings.Replace(base, "deploystep:1}", "deploystep:1, stepMode: plugin}", 1): StepModePlugin,
	} {
		p, err := Load("t.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		w := p.Platform.Spec.Workflow
		if w.StepMode != want || w.StepMode.Plugin() != (want == StepModePlugin) {
			t.Errorf("StepMode %q, Plugin() = %v; want %q", w.StepMode, w.StepMode.Plugin(), want)
		}
		if want == StepModePod && w.StepMode != "" {
			t.Errorf("pod kept as %q, want the default \"\"", w.StepMode)
		}
	}
}
