package appread

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/pkg/importer/appdump"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := appdump.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
}

// Every input is bounded: a file, a folder's files together, stdin.
func TestBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "one", "big.yaml")
	write(t, dir, map[string]string{"one/big.yaml": "", "two/a.yaml": "", "two/b.yaml": ""})
	if err := os.Truncate(big, 64<<20+1); err != nil {
		t.Fatal(err)
	}
	// Two files under the bound each, over it together (of blank lines,
	// which parse to nothing).
	for _, f := range []string{"two/a.yaml", "two/b.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(strings.Repeat("\n", 40<<20)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Read([]string{big, filepath.Join(dir, "two")})
	want := "2 problems in the input (nothing was written):\n" +
		"  " + big + ": larger than the 64 MiB limit\n" +
		"  " + dir + "/two: larger than the 64 MiB limit (all its files together)"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}

	in := &Input{}
	err = in.ReadStdin(io.LimitReader(zeros{}, 64<<20+1), "(stdin)")
	if want := "1 problem in the input (nothing was written):\n  (stdin): larger than the 64 MiB limit"; err == nil || err.Error() != want {
		t.Errorf("stdin: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestKustomizeRootsSorted(t *testing.T) {
	in := &Input{}
	roots := in.kustomizeRoots(map[string]bool{
		"../testdata/kustomize-ai-accelerator/components/argocd/apps/base":                    true,
		"../testdata/kustomize-ai-accelerator/components/argocd/apps/overlays/rhoai-eus-2.25": true,
		"../testdata/kustomize-ai-accelerator/clusters/base":                                  true,
	})
	sort.Strings(roots)
	want := []string{"../testdata/kustomize-ai-accelerator/clusters/base", "../testdata/kustomize-ai-accelerator/components/argocd/apps/overlays/rhoai-eus-2.25"}
	if !reflect.DeepEqual(roots, want) || len(in.Problems) != 0 {
		t.Errorf("roots %v, problems %v", roots, in.Problems)
	}
}

// Argo CD's fasttemplate rendering: trimmed tags, unknown tags kept as
// written, a {{ without }} refused.
func TestFasttemplate(t *testing.T) {
	p := map[string]string{"values.name": "web", "cluster": "local"}
	for in, want := range map[string]string{
		"{{values.name}}":               "web",
		"{{ values.name }}-{{cluster}}": "web-local",
		"{{nope}}/{{ cluster}}":         "{{nope}}/local",
		"no tags":                       "no tags",
		"{{}}":                          "{{}}",
	} {
		if got, err := fasttemplate(in, p); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := fasttemplate("{{values.name}} {{oops", p); err == nil {
		t.Error("{{ without }}: no error")
	}
	got, err := replaceAll(map[string]any{"labels": map[string]any{"team-{{cluster}}": "{{values.name}}"}}, p)
	if want := map[string]any{"labels": map[string]any{"team-local": "web"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("map keys: %v %v", got, err)
	}
}

// A List that does not decode as a whole is decoded as a whole, for its
// errors, as before listHead: a duplicate key in an item or in the List.
func TestListHeadDeclines(t *testing.T) {
	item := "- {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}\n"
	for src, ok := range map[string]bool{
		"kind: List\nitems:\n" + item:                                   true,
		"kind: List\nitems:\n" + item + "items: []\n":                   false,
		"kind: List\nitems:\n- {kind: A, kind: B}\n":                    false,
		"kind: List\nkind: List\nitems:\n" + item:                       false,
		"kind: Listing\nitems: {}\n":                                    false,
		"kind: ConfigMap\nitems:\n" + item:                              false,
		"metadata: {name: x}\nkind: !!str List\nitems:\n" + item + item: true,
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		obj, got := listHead(doc.Content[0])
		if got != ok {
			t.Errorf("listHead(%q): %v, want %v", src, got, ok)
		}
		if got && obj["kind"] != "List" {
			t.Errorf("listHead(%q): kind %v", src, obj["kind"])
		}
	}
}
