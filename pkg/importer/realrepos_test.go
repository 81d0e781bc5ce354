package importer

import (
	"reflect"
	"strings"
	"testing"
)

// Public app-of-apps repositories, each fixture's facts written by hand
// from the tree before importing (testdata/NAME/SOURCE.md).

// brianjlehnen/k8s-homelab: two roots applied by hand, directory sources
// (recurse) holding child Applications beside many resources of their own;
// cluster-infra's own exclude glob has braces.
func TestK8sHomelab(t *testing.T) {
	r := importDir(t, "parent", "testdata/k8s-homelab")
	want := []string{
		"cert-manager@cluster-infra-apps", "cluster-infra@cluster-infra-apps", "core-services@core-services-apps",
		"kube-prometheus-stack@cluster-infra-apps", "kubernetes-dashboard@core-services-apps", "promtail@cluster-infra-apps",
	}
	if got := specApps(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("apps %v, want %v", got, want)
	}
	checkArgoSemantics(t, r,
		withOwn(0, 0, node("cluster-infra", 1, node("cert-manager", 0), node("promtail", 0), node("kube-prometheus-stack", 0))),
		withOwn(0, 0, node("core-services", 2, node("kubernetes-dashboard", 0))))
	if n := stackDeps(r); n != 1 {
		t.Errorf("%d dependencies, want 1", n)
	}
	if len(r.Differences) != 0 {
		t.Errorf("lost %v", r.Differences)
	}
	// Its own exclude kept, the children's files added beside it.
	got := apps(r)["cluster-infra"].Source.Directory
	if got == nil || got.Exclude != "{{applications/},cert-manager/cert-manager-app.yaml,logging/promtail-app.yaml,monitoring/kube-prometheus-stack-app.yaml}" || !got.Recurse {
		t.Errorf("cluster-infra directory %+v", got)
	}
	if d := apps(r)["core-services"].Source.Directory; d == nil || d.Exclude != "kubernetes-dashboard/dashboard-app.yaml" {
		t.Errorf("core-services directory %+v", d)
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "left out of its own app") {
			t.Errorf("note %q", n)
		}
	}
}

// barbar0jav1er/homelab-argocd: three levels of directory sources with
// include globs (`*` crossing `/`), a repository named scp-style, and a
// child whose second source is its own folder (its file excluded).
func TestHomelabArgocd(t *testing.T) {
	r := importDir(t, "parent", "testdata/homelab-argocd")
	checkArgoSemantics(t, r, node("homelab-root", 0,
		node("infrastructure", 0,
			node("cert-manager", 0), node("kube-prometheus-stack", 0), node("longhorn", 0), node("metallb", 0),
			node("intel-gpu-plugin", 0), node("pihole", 0), node("postgresql", 0), node("sealed-secrets", 0), node("traefik", 0),
			node("authentik", 1), node("nfs-csi-driver", 1), node("metallb-config", 2)),
		node("applications", 0, node("actual-budget", 0), node("nginx", 0), node("media", 1))))
	stacks := map[string]int{}
	for _, s := range r.Platform.Spec.Stacks {
		stacks[s.Name] = len(s.Apps)
	}
	want := map[string]int{"infrastructure-wave-0": 9, "infrastructure-wave-1": 2, "infrastructure-wave-2": 1, "applications-wave-0": 2, "applications-wave-1": 1}
	if !reflect.DeepEqual(stacks, want) {
		t.Errorf("stacks %v, want %v", stacks, want)
	}
	if n := stackDeps(r); n != 3 {
		t.Errorf("%d dependencies, want 3", n)
	}
	if len(r.Differences) != 0 {
		t.Errorf("lost %v", r.Differences)
	}
	if d := apps(r)["media"].Sources[1].Directory; d == nil || d.Exclude != "application.yaml" || d.Include != "*.yaml" {
		t.Errorf("media's own folder %+v", d)
	}
}

// PHACDataHub/iidi-tech: a root whose folder holds its own file beside its
// twelve children (it renders itself).
func TestIidiTech(t *testing.T) {
	r := importDir(t, "parent", "testdata/iidi-tech")
	checkArgoSemantics(t, r, node("root", 0,
		node("argocd-notifications", 0), node("cert-manager", 0), node("image-updater", 0), node("external-secrets", 0),
		node("cert-manager-issuers", 1), node("cnpg-system", 1),
		node("bc", 2), node("demo-portal", 2), node("demo-transfer-dashboard", 2), node("federal", 2), node("istio-ingress", 2), node("on", 2)))
	stacks := map[string]int{}
	for _, s := range r.Platform.Spec.Stacks {
		stacks[s.Name] = len(s.Apps)
	}
	if want := map[string]int{"root-wave-0": 4, "root-wave-1": 2, "root-wave-2": 6}; !reflect.DeepEqual(stacks, want) {
		t.Errorf("stacks %v, want %v", stacks, want)
	}
	if n := stackDeps(r); n != 2 {
		t.Errorf("%d dependencies, want 2", n)
	}
	if len(r.Differences) != 0 {
		t.Errorf("lost %v", r.Differences)
	}
	if !hasNote(r, "argocd/root (12)") {
		t.Errorf("root not left out:\n%s", strings.Join(r.Notes, "\n"))
	}
}

// InternalDeveloperPlatform/pe-gitops-course: a root applied by hand with
// Argo CD 3.1's `automated.enabled: true`, whose directory source holds
// only its three children (multi-source Helm, ignoreMissingValueFiles);
// the repository named scp-style.
func TestPeGitopsCourse(t *testing.T) {
	r := importDir(t, "parent", "testdata/pe-gitops-course")
	want := []string{"vcluster-project-x@app-of-apps", "vcluster-project-y@app-of-apps", "vcluster-project-z@app-of-apps"}
	if got := specApps(r); !reflect.DeepEqual(got, want) {
		t.Errorf("apps %v, want %v", got, want)
	}
	checkArgoSemantics(t, r, node("app-of-apps", 0, node("vcluster-project-x", 0), node("vcluster-project-y", 0), node("vcluster-project-z", 0)))
	if n := stackDeps(r); n != 0 {
		t.Errorf("%d dependencies, want 0", n)
	}
	if len(r.Differences) != 0 {
		t.Errorf("lost %v", r.Differences)
	}
	if !hasNote(r, "argocd/app-of-apps (3)") {
		t.Errorf("app-of-apps not left out:\n%s", strings.Join(r.Notes, "\n"))
	}
	d := r.Platform.Spec.Defaults
	if d.Source == nil || d.Source.RepoURL != "git@github.com:InternalDeveloperPlatform/pe-gitops-course.git" || d.Source.TargetRevision != "main" {
		t.Errorf("defaults.source %+v", d.Source)
	}
	if d.SyncPolicy == nil || d.SyncPolicy.Automated == nil || !d.SyncPolicy.Automated.AllowEmpty || len(d.SyncOptions) != 6 {
		t.Errorf("defaults: syncPolicy %+v, syncOptions %v", d.SyncPolicy, d.SyncOptions)
	}
	if h := apps(r)["vcluster-project-x"].Sources[0].Helm; h == nil || !h.IgnoreMissingValueFiles || h.ReleaseName != "vcluster-project-x" {
		t.Errorf("vcluster-project-x helm %+v", h)
	}

	// The root alone: one app, its Argo CD 3 field kept, its children's
	// folder named as not read.
	r = importDir(t, "parent", "testdata/pe-gitops-course/examples/module_05/app-of-app-application.yaml")
	if got := specApps(r); len(got) != 1 || !strings.HasPrefix(got[0], "app-of-apps@") {
		t.Fatalf("apps %v", got)
	}
	if len(r.Differences) != 0 {
		t.Errorf("lost %v", r.Differences)
	}
	sp := apps(r)["app-of-apps"].SyncPolicy
	if sp == nil {
		sp = r.Platform.Spec.Defaults.SyncPolicy
	}
	if sp == nil || sp.Automated == nil || sp.Automated.Enabled == nil || !*sp.Automated.Enabled || !sp.Automated.Prune || !sp.Automated.SelfHeal {
		t.Errorf("app-of-apps syncPolicy %+v", sp)
	}
	if !hasNote(r, "its children in") || !hasNote(r, "apps") {
		t.Errorf("no note on the unread children:\n%s", strings.Join(r.Notes, "\n"))
	}
}
