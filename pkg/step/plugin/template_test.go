package plugin

import (
	"strings"
	"testing"

	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

// The request decoding, whatever the body: never a panic, and what it
// accepts is what the rest of the plugin relies on — a named workflow,
// a command line, variables named once, no sync id of the template's, a
// node Argo filled, a template whose key can be computed. (make fuzz: FuzzParseRequest)
func FuzzParseRequest(f *testing.F) {
	k := pt.NewKube(f, "ns", "wf", "uid-1")
	f.Add(k.Body(validateTemplate("web")))
	f.Add(k.Body(syncTemplate("web")))
	f.Add(k.Body(pt.Template("t", nil, []string{"sync-and-wait", "--app", "a", "--sync-id="}, connEnv)))
	f.Add(k.Body(pt.Template("t", nil, []string{"validate", "--app", "a"}, map[string]string{"SYNC_ID": "x"})))
	f.Add([]byte(`{"workflow":{"metadata":{"uid":"u","name":"n","namespace":"s"}},"template":{"plugin":{"deployctl":{"args":["teardown"],"env":[{"name":"A"},{"name":"A"}]}}}}`))
	f.Add([]byte(`{"template":{"plugin":{"deployctl":null}}}`))
	f.Add(k.Body(pt.AtNode(syncTemplate("web"), "{{node.name}}", "{{retries}}")))
	f.Add([]byte(`{"workflow":{"metadata":{"uid":"u","name":"n","namespace":"s"}},"template":{"name":"t","inputs":{"parameters":[{"name":"p"}]},"plugin":{"deployctl":{"args":["-sync-id","x"]}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		wf, tmpl, c, err := parseRequest(body)
		if err != nil {
			if c != nil {
				t.Fatalf("an error with a call: %v", err)
			}
			return
		}
		if wf.UID == "" || wf.Name == "" || wf.Namespace == "" || tmpl == nil || c == nil || len(c.Args) == 0 {
			t.Fatalf("accepted without workflow, template or args: %+v %+v", wf, c)
		}
		seen := map[string]bool{}
		for _, e := range c.Env {
			if e.Name == "" || seen[e.Name] || e.Name == "SYNC_ID" {
				t.Fatalf("accepted env %+v", c.Env)
			}
			seen[e.Name] = true
		}
		for _, a := range c.Args {
			if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "sync-id" {
				t.Fatalf("accepted %q", a)
			}
		}
		if _, err := templateKey(tmpl.raw); err != nil {
			t.Fatalf("accepted a template without a key: %v", err)
		}
		if strings.Contains(c.Node, "{{") || strings.Contains(c.Attempt, "{{") {
			t.Fatalf("accepted a node Argo did not fill: %q %q", c.Node, c.Attempt)
		}
	})
}
