package compile

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// v3Spec uses every Argo CD 3 field the linked v2 Application has no
// place for: a source's tagPrefix (also in a default source and in one of
// several sources), kustomize's ignoreMissingComponents and
// labelIncludeTemplates, directory's disableExtensionFilter,
// syncPolicy.automated.enabled and syncPolicy.retry.refresh.
const v3Spec = `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: p}
spec:
  argocd: {namespace: argocd, server: argocd-server.argocd.svc:443}
  workflow: {image: example.com/deploystep:1}
  defaults:
    source: {repoURL: https://git.example.com/p.git, targetRevision: '1.*', tagPrefix: p/}
  stacks:
  - name: s
    apps:
    - name: a
      source: {path: a, kustomize: {ignoreMissingComponents: true, labelIncludeTemplates: true}}
      syncPolicy: {automated: {prune: true, enabled: false}, retry: {limit: 2, refresh: true}}
    - name: b
      sources:
      - {path: b, directory: {disableExtensionFilter: true, include: '*.yaml.sealed'}}
      - {repoURL: https://git.example.com/q.git, tagPrefix: q/, path: q}
      syncPolicy: {automated: {enabled: true}, retry: {refresh: true}}
    - name: c
      source: {path: c}
`

// The deploy task's manifest (what the step creates) carries every Argo CD
// 3 field of the spec at Argo CD's place for it; an app without them gets
// none of them.
func TestArgoCD3FieldsReachTheManifest(t *testing.T) {
	out := mustCompile(t, v3Spec)
	got := map[string]map[string]any{}
	for _, task := range out.WorkflowTemplates[dag.Deploy].Spec.Templates[0].DAG.Tasks {
		b64, ok := taskParams(task)["manifest-base64"]
		if !ok {
			continue
		}
		b64 = resolved(t, out, b64)
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		got[task.Name] = obj["spec"].(map[string]any)
	}
	at := func(obj any, path string) any {
		for _, k := range strings.Split(path, ".") {
			switch o := obj.(type) {
			case map[string]any:
				obj = o[k]
			case []any:
				i := int(k[0] - '0')
				if i >= len(o) {
					return nil
				}
				obj = o[i]
			default:
				return nil
			}
		}
		return obj
	}
	for _, c := range []struct {
		app, path string
		want      any
	}{
		{"a", "source.tagPrefix", "p/"},
		{"a", "source.targetRevision", "1.*"},
		{"a", "source.kustomize.ignoreMissingComponents", true},
		{"a", "source.kustomize.labelIncludeTemplates", true},
		{"a", "syncPolicy.automated.enabled", false},
		{"a", "syncPolicy.automated.prune", true},
		{"a", "syncPolicy.retry.refresh", true},
		{"a", "syncPolicy.retry.limit", 2.0},
		{"b", "sources.0.tagPrefix", "p/"},
		{"b", "sources.0.directory.disableExtensionFilter", true},
		{"b", "sources.0.directory.include", "*.yaml.sealed"},
		{"b", "sources.1.tagPrefix", "q/"},
		{"b", "syncPolicy.automated", map[string]any{"enabled": true}},
		{"b", "syncPolicy.retry", map[string]any{"refresh": true}},
		{"c", "source.tagPrefix", "p/"},
		{"c", "syncPolicy", nil},
	} {
		if v := at(got[c.app], c.path); !reflect.DeepEqual(v, c.want) {
			t.Errorf("%s: spec.%s = %#v, want %#v", c.app, c.path, v, c.want)
		}
	}
	// The same fields, listed for the version check.
	for _, a := range out.Applications {
		want := map[string]string{
			"a": "spec.source.kustomize.ignoreMissingComponents spec.source.kustomize.labelIncludeTemplates spec.source.tagPrefix spec.syncPolicy.automated.enabled spec.syncPolicy.retry.refresh",
			"b": "spec.sources[0].directory.disableExtensionFilter spec.sources[0].tagPrefix spec.sources[1].tagPrefix spec.syncPolicy.automated.enabled spec.syncPolicy.retry.refresh",
			"c": "spec.source.tagPrefix",
		}[a.Name]
		if got := strings.Join(a.V3Fields(), " "); got != want {
			t.Errorf("%s: V3Fields %q, want %q", a.Name, got, want)
		}
	}
	// The spec's own list (preflight's check that Argo CD knows them) is
	// these, less those every Argo CD 3 knows.
	doc, err := spec.Load("p.yaml", []byte(v3Spec))
	if err != nil {
		t.Fatal(err)
	}
	for i, sa := range doc.Platform.Spec.Stacks[0].Apps {
		var listed []string
		for _, f := range sa.NewerArgoCDFields() {
			listed = append(listed, f.Path)
		}
		var want []string
		for _, f := range out.Applications[i].V3Fields() {
			if !strings.Contains(f, "kustomize.") {
				want = append(want, f)
			}
		}
		slices.Sort(listed)
		if !slices.Equal(listed, want) {
			t.Errorf("%s: spec lists %v, the Application has %v", sa.Name, listed, want)
		}
	}
}
