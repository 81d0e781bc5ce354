package receiver

import (
	"encoding/json"
	"strings"
	"testing"

	dspec "github.com/deployctl/deployctl/pkg/spec"
)

// oldestArgoCD is the oldest Argo CD deployctl supports (README "Support
// matrix").
const oldestArgoCD = "github.com/argoproj/argo-cd/v3@v3.0.23"

// The spec's release lines of Argo CD 3's fields (spec.ArgoCDSince, what
// preflight judges a running Argo CD by) agree with the CRDs: a field of a
// line after v3.0 is not in v3.0.23's Application CRD (so an Argo CD of
// that line drops it) and is in v3.6.1's; kustomize's
// ignoreMissingComponents and labelIncludeTemplates, which need no check,
// are in both.
func TestArgoCD3FieldsByRelease(t *testing.T) {
	has := map[string]func(path string) bool{}
	schemas := map[string]map[string]any{}
	for _, m := range []string{oldestArgoCD, newestArgoCD} {
		raw, err := crdOpenAPI(m)
		if err != nil {
			noModule(t, err)
		}
		var schema map[string]any
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		schemas[m] = schema
		has[m] = func(path string) bool {
			var node any = schema["properties"].(map[string]any)["spec"]
			for _, k := range strings.Split(path, ".") {
				props, _ := node.(map[string]any)["properties"].(map[string]any)
				if node = props[k]; node == nil {
					return false
				}
			}
			return true
		}
	}
	if len(dspec.ArgoCDSince) != 4 {
		t.Errorf("%d fields with a release line: %v", len(dspec.ArgoCDSince), dspec.ArgoCDSince)
	}
	for path, since := range dspec.ArgoCDSince {
		if knows, _ := dspec.Knows("v3.0.23", since); knows {
			t.Errorf("%s: since %s, which v3.0.23 is", path, since)
		}
		if has[oldestArgoCD](path) || !has[newestArgoCD](path) {
			t.Errorf("%s (since %s): in v3.0.23's CRD %v, in v3.6.1's %v", path, since, has[oldestArgoCD](path), has[newestArgoCD](path))
		}
	}
	for _, path := range []string{"source.kustomize.ignoreMissingComponents", "source.kustomize.labelIncludeTemplates"} {
		if !has[oldestArgoCD](path) || !has[newestArgoCD](path) {
			t.Errorf("%s: in v3.0.23's CRD %v, in v3.6.1's %v", path, has[oldestArgoCD](path), has[newestArgoCD](path))
		}
	}
	// The CRD prunes what it does not know: no preserve-unknown-fields
	// on the way to these fields (only helm.valuesObject has it).
	for _, path := range []string{"", "source", "syncPolicy", "syncPolicy.automated", "syncPolicy.retry", "source.directory"} {
		var node any = schemas[oldestArgoCD]["properties"].(map[string]any)["spec"]
		for _, k := range strings.Split(path, ".") {
			if k != "" {
				node = node.(map[string]any)["properties"].(map[string]any)[k]
			}
		}
		if p, _ := node.(map[string]any)["x-kubernetes-preserve-unknown-fields"].(bool); p {
			t.Errorf("v3.0.23's spec.%s keeps unknown fields", path)
		}
	}
}
