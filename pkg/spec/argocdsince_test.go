package spec

import (
	"fmt"
	"testing"
)

func TestKnows(t *testing.T) {
	for _, tc := range []struct {
		version, since string
		knows, ok      bool
	}{
		{"v3.0.23", "v3.1", false, true},
		{"v3.1.0", "v3.1", true, true},
		{"v3.4.2", "v3.5", false, true},
		{"v3.6.1", "v3.6", true, true},
		{"v3.6.1+abc", "v3.6", true, true},
		{"v3.6-rc1", "v3.6", true, true},
		{"v4.0.0", "v3.6", true, true},
		{"v2.14.21", "v3.1", false, true},
		{"3.10.0", "v3.6", true, true},
		{"latest", "v3.1", false, false},
		{"", "v3.1", false, false},
	} {
		knows, ok := Knows(tc.version, tc.since)
		if knows != tc.knows || ok != tc.ok {
			t.Errorf("Knows(%q, %q) = %v, %v; want %v, %v", tc.version, tc.since, knows, ok, tc.knows, tc.ok)
		}
	}
}

// Every Argo CD 3 field newer than v3.0 an app uses is listed, with its
// release line, where the Application has it; defaults count (Load
// applies them).
func TestNewerArgoCDFields(t *testing.T) {
	src := []byte(`apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: p}
spec:
  argocd: {namespace: argocd, server: argocd-server.argocd.svc:443}
  workflow: {image: example.com/deploystep:1}
  defaults:
    source: {repoURL: https://git.example.com/p.git, targetRevision: main, tagPrefix: p/}
    syncPolicy: {automated: {enabled: false}}
  stacks:
  - name: s
    apps:
    - name: a
      source: {path: a, kustomize: {ignoreMissingComponents: true}}
    - name: b
      sources:
      - {path: b, directory: {disableExtensionFilter: true}}
      syncPolicy: {retry: {refresh: true}}
    - name: c
      source: {path: c}
      syncPolicy: {}
`)
	doc, err := Load("p.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a": "[{spec.source.tagPrefix v3.5} {spec.syncPolicy.automated.enabled v3.1}]",
		"b": "[{spec.sources[0].directory.disableExtensionFilter v3.6} {spec.sources[0].tagPrefix v3.5} {spec.syncPolicy.retry.refresh v3.2}]",
		"c": "[{spec.source.tagPrefix v3.5}]",
	}
	for _, a := range doc.Platform.Spec.Stacks[0].Apps {
		if got := fmt.Sprint(a.NewerArgoCDFields()); got != want[a.Name] {
			t.Errorf("%s: %s, want %s", a.Name, got, want[a.Name])
		}
	}
}
