package dag

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/spec"
)

var update = flag.Bool("update", false, "rewrite examples/invalid/*.err from the current messages")

// TestInvalidExamples runs every check on examples/invalid/*.yaml — one file
// per error class — and compares the exact messages with the .err beside it.
func TestInvalidExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/invalid/*.yaml")
	if err != nil || len(files) < 15 {
		t.Fatalf("want the invalid examples, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			rel := "examples/invalid/" + filepath.Base(f)
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, got := Parse(rel, data)
			if got == nil {
				t.Fatal("accepted an invalid spec")
			}
			var list spec.Errors
			if !errors.As(got, &list) {
				t.Fatalf("error is not a located spec.Errors: %v", got)
			}
			for _, e := range list {
				if e.File != rel || e.Line == 0 {
					t.Errorf("error without file and line: %q", e.Error())
				}
			}
			golden := strings.TrimSuffix(f, ".yaml") + ".err"
			if *update {
				if err := os.WriteFile(golden, []byte(got.Error()+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got.Error()+"\n" != string(want) {
				t.Errorf("message differs from %s:\n got: %s\nwant: %s", filepath.Base(golden), got, want)
			}
		})
	}
}

// TestCycleIsARealPath checks the cycle message names each edge's line.
func TestCycleIsARealPath(t *testing.T) {
	_, err := Load("../../examples/invalid/cycle.yaml")
	if err == nil {
		t.Fatal("cycle accepted")
	}
	msg := err.Error()
	for _, want := range []string{"dependency cycle ceph-cluster → ceph-operator → vault → ceph-cluster", "ceph-cluster → ceph-operator: line 24", "vault → ceph-cluster: line 29"} {
		if !strings.Contains(msg, want) {
			t.Errorf("cycle message %q lacks %q", msg, want)
		}
	}
}
