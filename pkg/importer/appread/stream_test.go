package appread

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/internal/safeyaml"
	"github.com/deployctl/deployctl/pkg/importer/appdump"
)

// A List read item by item gives exactly what the whole document gives:
// the same Applications at the same lines, the same notes and problems.
// Where the split would be wrong, parseList must give up (and the result
// is still the same).
func TestStreamSameAsWhole(t *testing.T) {
	item := func(name, extra string) string {
		return "- apiVersion: argoproj.io/v1alpha1\n  kind: Application\n  metadata:\n    name: " + name + "\n    namespace: argocd\n" + extra +
			"  spec:\n    project: default\n    source: {repoURL: https://git.example.com/r.git, path: " + name + "}\n    destination: {server: https://kubernetes.default.svc, namespace: x}\n"
	}
	cases := []struct {
		name     string
		data     string
		streamed bool // splitList and every item parse: read item by item
	}{
		{"dump", string(appdump.List(60, 5)), true},
		{"kubectl order", "apiVersion: v1\nitems:\n" + item("a", "") + "# a comment\n\n" + item("b", "") + "kind: List\nmetadata:\n  resourceVersion: \"\"\n", true},
		{"indented items", "apiVersion: v1\nkind: List\nitems:\n" + indent(item("a", "")+item("b", ""), "  "), true},
		{"crlf", strings.ReplaceAll("apiVersion: v1\nkind: List\nitems:\n"+item("a", "")+item("b", ""), "\n", "\r\n"), true},
		{"other objects", "apiVersion: v1\nkind: List\nitems:\n" + item("a", "") + "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n- 42\n", true},
		{"bad item", "apiVersion: v1\nkind: List\nitems:\n" + item("a", "") + "- apiVersion: argoproj.io/v1alpha1\n  kind: Application\n  metadata: {name: b}\n  spec: {syncPolicy: [1]}\n", true},
		{"nested list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n" + indent(item("a", ""), "  "), true},
		// Splits that would be wrong: each must fall back.
		{"quoted scalar over an item line", "apiVersion: v1\nkind: List\nitems:\n" + item("a", "    annotations: {x: \"one\n- two\"}\n") + item("b", ""), false},
		{"anchor across items", "apiVersion: v1\nkind: List\nitems:\n" + item("a", "    labels: &l {t: x}\n") + item("b", "    labels: *l\n"), false},
		{"duplicate key in an item", "apiVersion: v1\nkind: List\nitems:\n" + item("a", "    namespace: other\n") + item("b", ""), false},
		{"two items keys", "apiVersion: v1\nkind: List\nitems:\n" + item("a", "") + "items:\n" + item("b", ""), false},
		{"head does not parse", "apiVersion: v1\nkind: [List\nitems:\n" + item("a", ""), false},
		{"not a List", "apiVersion: v1\nkind: Thing\nitems:\n" + item("a", ""), false},
		{"documents", "apiVersion: v1\nkind: List\nitems:\n" + item("a", "") + "---\napiVersion: v1\nkind: List\nitems:\n" + item("b", ""), false},
		{"syntax error after items", "apiVersion: v1\nitems:\n" + item("a", "") + "kind: List\nmetadata: {a: b\n", false},
		{"tab", "apiVersion: v1\nkind: List\nitems:\n" + item("a", "    labels:\n\t  t: x\n"), false},
		{"empty items", "apiVersion: v1\nkind: List\nitems:\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			streamed, whole := &Input{}, &Input{}
			ok := streamed.parseList("l.yaml", "f", []byte(c.data))
			if !ok {
				streamed.parseDocuments("l.yaml", "f", []byte(c.data))
			}
			if ok != c.streamed {
				t.Errorf("read item by item: %v, want %v", ok, c.streamed)
			}
			whole.parseDocuments("l.yaml", "f", []byte(c.data))
			sameInput(t, streamed, whole)
		})
	}
}

// Every fixture reads the same either way.
func TestStreamFixtures(t *testing.T) {
	err := filepath.WalkDir("../testdata", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !isManifest(p) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		streamed, whole := &Input{}, &Input{}
		streamed.parse(p, "f", data)
		if helmLine(data) == 0 {
			whole.size = int64(len(data))
			whole.parseDocuments(p, "f", data)
		} else {
			whole.parse(p, "f", data)
		}
		sameInput(t, streamed, whole)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sameInput(t *testing.T, got, want *Input) {
	t.Helper()
	// What aliases added is counted per parse (an item's document node, the
	// head's placeholder): the same bound, not the same count.
	g, w := *got, *want
	g.aliases, w.aliases = safeyaml.Budget{}, safeyaml.Budget{}
	if !reflect.DeepEqual(&g, &w) {
		var g, w []string
		for _, m := range got.Apps {
			g = append(g, m.Where()+" "+m.App.Name+" "+string(m.Raw))
		}
		for _, m := range want.Apps {
			w = append(w, m.Where()+" "+m.App.Name+" "+string(m.Raw))
		}
		t.Errorf("read item by item:\n%s\nproblems %q\nwhole:\n%s\nproblems %q", strings.Join(g, "\n"), got.Problems, strings.Join(w, "\n"), want.Problems)
	}
}

func indent(s, by string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "")
}
