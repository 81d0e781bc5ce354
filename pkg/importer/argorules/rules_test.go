package argorules

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/gitops-engine/pkg/sync/syncwaves"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Argo CD's wave is strconv.Atoi of the annotation, untrimmed, else the
// Helm hook weight, else 0 (gitops-engine syncwaves.Wave).
func TestSyncWaveLikeArgoCD(t *testing.T) {
	for _, tc := range []struct {
		ann             map[string]string
		wave            int
		has, unreadable bool
	}{
		{nil, 0, false, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": "5"}, 5, true, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": "-30"}, -30, true, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": "+7"}, 7, true, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": " 5"}, 0, false, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": "5 "}, 0, false, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": "1e2"}, 0, false, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": ""}, 0, false, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": "one", "helm.sh/hook-weight": "3"}, 3, true, true},
		{map[string]string{"helm.sh/hook-weight": "-2"}, -2, true, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": "4", "helm.sh/hook-weight": "3"}, 4, true, false},
		{map[string]string{"helm.sh/hook-weight": " 3"}, 0, false, false},
	} {
		w, has, unreadable := SyncWave(tc.ann)
		if w != tc.wave || has != tc.has || unreadable != tc.unreadable {
			t.Errorf("%v: wave %d has %v unreadable %v, want %d %v %v", tc.ann, w, has, unreadable, tc.wave, tc.has, tc.unreadable)
		}
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAnnotations(tc.ann)
		if argo := syncwaves.Wave(u); argo != w {
			t.Errorf("%v: wave %d, gitops-engine %d", tc.ann, w, argo)
		}
	}
}

func TestParseTrackingID(t *testing.T) {
	for in, want := range map[string]*TrackingID{
		"root:argoproj.io/Application:argocd/web":       {App: "root", Group: "argoproj.io", Kind: "Application", Namespace: "argocd", Name: "web"},
		"team_root:argoproj.io/Application:team/web":    {App: "team_root", Group: "argoproj.io", Kind: "Application", Namespace: "team", Name: "web"},
		"root:/ConfigMap:/cm":                           {App: "root", Kind: "ConfigMap", Name: "cm"},
		"root:argoproj.io/Application:argocd/web:extra": nil, // name part has 2 "/"-parts only if no more ":"? → "argocd/web:extra"
		"root:argoproj.io/Application":                  nil,
		"root":                                          nil,
		"root:argoproj.io/x/Application:argocd/web":     nil,
		"root:argoproj.io/Application:argocd/web/x":     nil,
	} {
		got, ok := ParseTrackingID(in)
		if want == nil {
			// Argo CD splits on the first two colons: the third part may
			// hold more, and then it still needs exactly one "/".
			if in == "root:argoproj.io/Application:argocd/web:extra" {
				if !ok || got.Name != "web:extra" {
					t.Errorf("%q: %+v %v", in, got, ok)
				}
				continue
			}
			if ok {
				t.Errorf("%q: parsed as %+v", in, got)
			}
			continue
		}
		if !ok || got != *want {
			t.Errorf("%q: %+v %v, want %+v", in, got, ok, *want)
		}
	}
}

func TestParentRef(t *testing.T) {
	app := func(labels, ann map[string]string) *appv1.Application {
		a := &appv1.Application{}
		a.Name, a.Namespace, a.Labels, a.Annotations = "web", "argocd", labels, ann
		return a
	}
	for _, tc := range []struct {
		a           *appv1.Application
		name, by    string
		mustResolve bool
		bad         string
	}{
		{app(map[string]string{"argocd.argoproj.io/instance": "root"}, nil), "root", "argocd.argoproj.io/instance", false, ""},
		{app(map[string]string{"app.kubernetes.io/instance": "root"}, nil), "root", "app.kubernetes.io/instance", true, ""},
		{app(nil, map[string]string{"argocd.argoproj.io/tracking-id": "root:argoproj.io/Application:argocd/web"}), "root", "argocd.argoproj.io/tracking-id", false, ""},
		// copied from another object's manifest: not this one's tracking
		{app(nil, map[string]string{"argocd.argoproj.io/tracking-id": "root:argoproj.io/Application:argocd/api"}), "", "", false, "describes another object"},
		{app(nil, map[string]string{"argocd.argoproj.io/tracking-id": "root"}), "", "", false, "is not <app>:<group>/<kind>:<namespace>/<name>"},
		// annotation+label: both say the same; the annotation is read
		{app(map[string]string{"argocd.argoproj.io/instance": "root"}, map[string]string{"argocd.argoproj.io/tracking-id": "root:argoproj.io/Application:argocd/web"}), "root", "argocd.argoproj.io/tracking-id", false, ""},
	} {
		got, bad := ParentRef(tc.a)
		if got.Name != tc.name || got.By != tc.by || got.MustResolve != tc.mustResolve || !strings.Contains(bad, tc.bad) || (tc.bad == "" && bad != "") {
			t.Errorf("%v %v: %+v %q", tc.a.Labels, tc.a.Annotations, got, bad)
		}
	}
}

func TestNormalizeRepo(t *testing.T) {
	same := []string{
		"https://github.com/Example-Org/gitops.git", "https://GitHub.com/Example-Org/gitops", "https://github.com/Example-Org/gitops/",
		"git@github.com:Example-Org/gitops.git", "ssh://git@github.com/Example-Org/gitops.git", "http://github.com/Example-Org/gitops.git/",
	}
	for _, u := range same {
		if got := NormalizeRepo(u); got != "github.com/Example-Org/gitops" {
			t.Errorf("%s → %s", u, got)
		}
	}
	if NormalizeRepo("https://github.com/example-org/other") == NormalizeRepo(same[0]) {
		t.Error("two repositories are one")
	}
}

// Directory sources select files as argo-cd's findManifests does: manifest
// extensions, subfolders only with recurse, exclude then include as
// gobwas globs on the path relative to the source (where * crosses "/").
func TestManifestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.yaml", "b.yml", "c.json", "d.jsonnet", "e.txt", "sub/f.yaml", "sub/deep/g.yaml", ".hidden/h.yaml", "s.yaml.sealed"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		d      appv1.ApplicationSourceDirectory
		anyExt bool // disableExtensionFilter (Argo CD 3.6)
		want   string
	}{
		{appv1.ApplicationSourceDirectory{}, false, "a.yaml b.yml c.json d.jsonnet"},
		{appv1.ApplicationSourceDirectory{}, true, "a.yaml b.yml c.json d.jsonnet e.txt s.yaml.sealed"},
		{appv1.ApplicationSourceDirectory{Include: "{*.yaml.sealed,*.yaml}"}, true, "a.yaml s.yaml.sealed"},
		{appv1.ApplicationSourceDirectory{Recurse: true}, false, ".hidden/h.yaml a.yaml b.yml c.json d.jsonnet sub/deep/g.yaml sub/f.yaml"},
		{appv1.ApplicationSourceDirectory{Recurse: true, Include: "*.yaml"}, false, ".hidden/h.yaml a.yaml sub/deep/g.yaml sub/f.yaml"},
		{appv1.ApplicationSourceDirectory{Recurse: true, Include: "sub/*"}, false, "sub/deep/g.yaml sub/f.yaml"},
		{appv1.ApplicationSourceDirectory{Recurse: true, Exclude: "{sub/*,*.json}"}, false, ".hidden/h.yaml a.yaml b.yml d.jsonnet"},
		{appv1.ApplicationSourceDirectory{Recurse: true, Include: "*.yaml", Exclude: "sub/deep/*"}, false, ".hidden/h.yaml a.yaml sub/f.yaml"},
	} {
		if got := strings.Join(ManifestFiles(filepath.ToSlash(dir), tc.d, tc.anyExt), " "); got != tc.want {
			t.Errorf("%+v %v: %s, want %s", tc.d, tc.anyExt, got, tc.want)
		}
	}
	for _, tc := range []struct {
		existing string
		files    []string
		want     string
		ok       bool
	}{
		{"", []string{"a.yaml"}, "a.yaml", true},
		{"", []string{"a.yaml", "x/b[1].yaml"}, `{a.yaml,x/b\[1\].yaml}`, true},
		{"*.md", []string{"a.yaml"}, "{*.md,a.yaml}", true},
		{"{a,b}", []string{"c.yaml"}, "{{a,b},c.yaml}", true},
		{"{applications/}", []string{"x/a.yaml"}, "{{applications/},x/a.yaml}", true},
		{"a,b", []string{"c.yaml"}, "", false},
		{"{a", []string{"c.yaml"}, "", false},
	} {
		got, ok := ExcludeGlob(tc.existing, tc.files)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q %v: %q %v", tc.existing, tc.files, got, ok)
		}
	}
}

// Where an object of a parent's own resources sits in its sync.
func TestHookWave(t *testing.T) {
	for _, tc := range []struct {
		ann    map[string]string
		lo, hi int
		counts bool
	}{
		{nil, 0, 0, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": "20"}, 20, 20, true},
		{map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "20"}, math.MinInt, math.MinInt, true},
		{map[string]string{"argocd.argoproj.io/hook": "PostSync"}, math.MaxInt, math.MaxInt, true},
		{map[string]string{"argocd.argoproj.io/hook": "PreSync,PostSync"}, math.MinInt, math.MaxInt, true},
		{map[string]string{"argocd.argoproj.io/hook": "Sync", "argocd.argoproj.io/sync-wave": "3"}, 3, 3, true},
		{map[string]string{"argocd.argoproj.io/hook": "Skip"}, 0, 0, false},
		{map[string]string{"argocd.argoproj.io/hook": "SyncFail"}, 0, 0, false},
		{map[string]string{"helm.sh/hook": "post-install,post-upgrade"}, math.MaxInt, math.MaxInt, true},
		{map[string]string{"helm.sh/hook": "pre-install", "helm.sh/hook-weight": "5"}, math.MinInt, math.MinInt, true},
		{map[string]string{"helm.sh/hook": "test"}, 0, 0, false},
	} {
		lo, hi, counts := HookWave(tc.ann)
		if lo != tc.lo || hi != tc.hi || counts != tc.counts {
			t.Errorf("%v: %d…%d %v, want %d…%d %v", tc.ann, lo, hi, counts, tc.lo, tc.hi, tc.counts)
		}
	}
}
