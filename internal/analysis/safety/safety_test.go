package safety

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"
)

// TestAnalyzer checks every pattern, the sanctioned packages, test files and
// //safety:allow against the // want comments under testdata/src.
func TestAnalyzer(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), Analyzer,
		"github.com/deployctl/deployctl/pkg/bad",
		"github.com/deployctl/deployctl/pkg/render",
		"github.com/deployctl/deployctl/internal/...")

	// The allows that kept a finding are the result, with their reasons.
	var got []string
	for _, r := range results {
		for _, a := range r.Result.([]Allowed) {
			got = append(got, fmt.Sprintf("%s:%d:%d %s: %s", filepath.Base(a.Pos.Filename), a.Pos.Line, a.Pos.Column, a.Pattern, a.Reason))
		}
	}
	slices.Sort(got)
	got = slices.Compact(got) // the package and its test variant both report them
	want := []string{
		"allow.go:6:6 remove: dir is the temporary folder this function made",
		"allow.go:9:9 read: the file is embedded in the binary at build time",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("allowed:\n got %q\nwant %q", got, want)
	}
}

func TestWords(t *testing.T) {
	for name, want := range map[string][]string{
		"respBody":    {"resp", "body"},
		"HTTPError":   {"http", "error"},
		"err_msg":     {"err", "msg"},
		"stderr":      {"stderr"},
		"toHexString": {"to", "hex", "string"},
		"x":           {"x"},
	} {
		if got := words(name); !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", name, got, want)
		}
	}
}
