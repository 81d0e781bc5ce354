package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

const overlaySpec = `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: p}
spec:
  argocd: {server: argocd.example.com:443}
  workflow: {image: r.example.com/deploystep:1}
  defaults:
    source: {repoURL: https://git.example.com/r.git, targetRevision: main}
    destination: {server: https://kubernetes.default.svc}
  stacks:
    - name: s
      apps:
        - {name: a, source: {path: a}, destination: {namespace: a}}
        - {name: b, source: {path: b}, destination: {namespace: b}, timeouts: {sync: 9m}}
`

// An override is merged like a written default (an app's own value wins),
// and an error in it names the override's file, line and field.
func TestOverridesAreALayerOfLoading(t *testing.T) {
	over := []Override{{Path: "spec.defaults.timeouts.sync", Value: "7m0s", File: "environment.yaml", Line: 4, Field: "timeouts.sync"}}
	d, err := LoadPartialWith("dag.yaml", []byte(overlaySpec), over)
	if err != nil {
		t.Fatal(err)
	}
	apps := d.Platform.Spec.Stacks[0].Apps
	if apps[0].Timeouts.Sync.String() != "7m0s" || apps[1].Timeouts.Sync.String() != "9m0s" {
		t.Errorf("sync timeouts %s, %s: want the override, then b's own", apps[0].Timeouts.Sync, apps[1].Timeouts.Sync)
	}
	if d.Sets("spec.defaults.timeouts.sync") || !d.Sets("spec.stacks[0].apps[1].timeouts.sync") {
		t.Error("Sets must tell the spec's own values from an override's")
	}

	over = append(over,
		Override{Path: "spec.defaults.retry.limit", Value: json.Number("49"), File: "environment.yaml", Line: 6, Field: "retries.maxAttempts"},
		Override{Path: "spec.metadata.x", Value: "y", File: "environment.yaml", Line: 8, Field: "x"})
	over[0].Value = "900h0m0s"
	_, err = LoadPartialWith("dag.yaml", []byte(strings.Replace(overlaySpec, "metadata: {name: p}\n", "", 1)+"  metadata: 5\n"), over)
	got := err.Error()
	for _, want := range []string{
		"environment.yaml:4: timeouts.sync (spec.defaults.timeouts.sync): 900h0m0s is longer than the maximum",
		"environment.yaml:6: retries.maxAttempts (spec.defaults.retry.limit): must be <= 20",
		"spec.metadata: is not a mapping, so x (environment.yaml:8) cannot be set in it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors:\n%s\nwant %q", got, want)
		}
	}
}
