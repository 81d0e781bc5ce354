package appread

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appdump"
)

// A folder with a kustomization is read as its build: a root.yaml and an
// apps/ folder beside it, which it does not list, are named with the
// command that reads them, not skipped in silence.
func TestUnreadBesideKustomization(t *testing.T) {
	dir := t.TempDir()
	app := func(name string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + name + ", namespace: argocd}\n" +
			"spec: {project: default, destination: {namespace: x}, source: {repoURL: https://e.com/r.git, path: apps}}\n"
	}
	if err := appdump.WriteFiles(dir, map[string]string{
		"kustomization.yaml":         "resources:\n- project.yaml\n- configs\n",
		"project.yaml":               "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p, namespace: argocd}\n",
		"configs/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"configs/kustomization.yaml": "resources:\n- cm.yaml\n",
		"root.yaml":                  app("root"),
		"apps/a.yaml":                app("a"),
		"README.md":                  "kind: Application\n",
		"values.yaml":                "replicas: 2\n",
	}); err != nil {
		t.Fatal(err)
	}
	in, err := Read([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	err = in.Check()
	want := dir + " is a Kustomize folder, read as its build (as Argo CD renders it): apps/, root.yaml beside its kustomization hold " +
		"Applications it does not list, not read; to import them too: deployctl import " + dir + " " +
		filepath.Join(dir, "apps") + " " + filepath.Join(dir, "root.yaml")
	if err == nil || !strings.Contains(err.Error(), "no Argo CD Application found") || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v\nwant %q", err, want)
	}
	// The command it gives reads them, and says nothing more.
	in, err = Read([]string{dir, filepath.Join(dir, "apps"), filepath.Join(dir, "root.yaml")})
	if err != nil || in.Check() != nil || len(in.Apps) != 2 || len(in.Unread) != 0 {
		t.Fatalf("%v: %d apps, unread %v", err, len(in.Apps), in.Unread)
	}
}
