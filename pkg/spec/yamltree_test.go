package spec

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// A spec with anchors keeps its nodes while it is converted (an alias
// converts its anchor again); one without drops them as it goes. Both load
// to the same platform.
func TestLoadWithAndWithoutAnchors(t *testing.T) {
	data, err := os.ReadFile("../../examples/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plain := string(data)
	anchored := strings.Replace(plain, "destination: {namespace: app}\n      timeouts", "destination: &app {namespace: app}\n      timeouts", 1)
	anchored = strings.Replace(anchored, "destination: {namespace: app}\n      healthChecks", "destination: *app\n      healthChecks", 1)
	if anchored == plain || strings.Count(anchored, "&app") != 1 || strings.Count(anchored, "*app") != 1 {
		t.Fatal("the fixture changed: no anchor and alias put in")
	}
	a, err := Load("plain.yaml", []byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load("anchored.yaml", []byte(anchored))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Platform.Spec.Stacks[1].Apps[1].Destination.Namespace, "app"; got != want {
		t.Errorf("aliased destination namespace %q, want %q", got, want)
	}
	ja, _ := json.Marshal(a.Platform)
	jb, _ := json.Marshal(b.Platform)
	if string(ja) != string(jb) {
		t.Error("the anchored spec loads to another platform than the plain one")
	}
}

// An alias bomb (ten levels of ten aliases: 10^10 values from 721 bytes) is
// refused before anything expands it, at the alias that passed the bound.
func TestAliasBombRefused(t *testing.T) {
	_, err := Read("testdata/alias-bomb.yaml")
	want := "testdata/alias-bomb.yaml:10: invalid YAML: alias expansion exceeds"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %q…", err, want)
	}
	_, err = Load("loop.yaml", []byte("apiVersion: deployctl.dev/v1alpha1\nkind: Platform\nmetadata: &m {name: x, loop: *m}\n"))
	if err == nil || !strings.Contains(err.Error(), "loop.yaml:3: invalid YAML: recursive YAML alias") {
		t.Fatalf("recursive alias: %v", err)
	}
}
