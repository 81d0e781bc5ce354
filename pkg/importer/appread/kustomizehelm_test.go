package appread

import (
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appdump"
)

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := appdump.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

const helmKustomization = "helmCharts:\n- name: web\n  repo: https://charts.example.com\n  version: 1.0.0\n"

// helmCharts: the advice depends on where the folder sits. Building a
// workload's chart and importing the output imports nothing, so that is
// advised only where the chart may render Applications.
func TestHelmChartsAdvice(t *testing.T) {
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\n" +
		"spec: {project: default, destination: {namespace: web}, source: {repoURL: https://e.com/r.git, path: workloads/web}}\n"
	t.Run("the source of an Application read: left out, with a note", func(t *testing.T) {
		dir := tree(t, map[string]string{"apps/web.yaml": app, "workloads/web/kustomization.yaml": helmKustomization})
		in, err := Read([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		want := dir + "/workloads/web: helmCharts (web from https://charts.example.com): what Application argocd/web deploys " +
			"(Argo CD renders it with Helm), not Applications, left out"
		if !strings.Contains(strings.Join(in.Notes(), "\n"), want) {
			t.Errorf("notes %v, want %q", in.Notes(), want)
		}
	})
	t.Run("a folder of its own: both ways out", func(t *testing.T) {
		dir := tree(t, map[string]string{"kustomization.yaml": helmKustomization})
		_, err := Read([]string{dir})
		want := dir + "/kustomization.yaml: helmCharts (web from https://charts.example.com): the import runs no helm. " +
			"If an Application deploys this folder, it holds that app's resources, not Applications: leave it out of the paths you import " +
			"(give the folders of Applications); if the chart renders Applications, render it first: kustomize build --enable-helm " + dir + " | deployctl import -"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant %q", err, want)
		}
	})
	t.Run("a base of the build: the chain, and the build to render", func(t *testing.T) {
		dir := tree(t, map[string]string{
			".git/HEAD":                  "ref: refs/heads/main\n", // a checkout: the base is inside it
			"overlay/kustomization.yaml": "resources:\n- ../base\n",
			"base/kustomization.yaml":    helmKustomization,
		})
		_, err := Read([]string{dir + "/overlay"})
		want := dir + "/base/kustomization.yaml: helmCharts (web from https://charts.example.com): Kustomize renders a Helm chart here and the import runs no helm " +
			"(reached from " + dir + "/overlay → " + dir + "/base); render the build that uses it first: kustomize build --enable-helm " + dir + "/overlay | deployctl import -"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant %q", err, want)
		}
	})
}

// A problem in a file outside the path given names the chain of bases
// that reached it, and the build to run is the one given.
func TestProblemOutsideNamesChain(t *testing.T) {
	dir := tree(t, map[string]string{
		".git/HEAD":                        "ref: refs/heads/main\n", // a checkout: shared/ is inside it
		"clusters/prod/kustomization.yaml": "resources:\n- ../../shared/apps\n",
		"shared/apps/kustomization.yaml":   "resources:\n- ../base\n",
		"shared/base/kustomization.yaml":   "resources:\n- https://github.com/example/remote//base?ref=main\n",
	})
	_, err := Read([]string{dir + "/clusters/prod"})
	for _, want := range []string{
		dir + `/shared/base/kustomization.yaml: resources: "https://github.com/example/remote//base?ref=main": `,
		"never the network: build it first: kustomize build " + dir + "/clusters/prod | deployctl import - " +
			"(reached from " + dir + "/clusters/prod → " + dir + "/shared/apps → " + dir + "/shared/base)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant %q", err, want)
		}
	}
}
