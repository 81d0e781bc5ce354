package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"
)

// moduleDir is the module cache directory of MODULE at the version the tools
// module in ../../../<toolsDir> requires, downloaded when missing.
func moduleDir(t *testing.T, toolsDir, module string) string {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join("..", "..", "..", toolsDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var version string
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == module && strings.HasPrefix(f[1], "v") {
			version = f[1]
		}
	}
	if version == "" {
		t.Fatalf("%s/go.mod does not require %s", toolsDir, module)
	}
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(cache)), module+"@"+version)
	if _, err := os.Stat(dir); err != nil {
		// In the tools module, so that its go.mod's toolchain is used.
		cmd := exec.Command("go", "mod", "download", module)
		cmd.Dir = filepath.Join("..", "..", "..", toolsDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go mod download %s@%s: %v\n%s", module, version, err, out)
		}
	}
	return dir
}

func sources(t *testing.T) Sources {
	return Sources{
		ArgoCD:        moduleDir(t, "argocd-v3.6", "github.com/argoproj/argo-cd/v3"),
		ArgoWorkflows: moduleDir(t, "awf", "github.com/argoproj/argo-workflows/v4"),
		ArgoEvents:    moduleDir(t, "boot-events", "github.com/argoproj/argo-events"),
		SealedSecrets: moduleDir(t, "boot-events", "github.com/bitnami-labs/sealed-secrets"),
	}
}

var testOpts = Options{Registry: "local.test", NATSImage: "local.test/nats:v2.15.3", StandIn: "local.test/pause:3.10",
	JetStreamVersion: "2.10.10", Broken: []string{"argo-workflows"}}

// release renders a built chart as `helm install NAME -n NS -f values` would.
func release(t *testing.T, c *Chart, name, ns string, values map[string]any) (map[string][]map[string]any, error) {
	t.Helper()
	dir := t.TempDir()
	p, err := c.Package(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: name, Namespace: ns, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	byKind := map[string][]map[string]any{}
	for file, text := range out {
		if !strings.HasSuffix(file, ".yaml") {
			continue
		}
		for _, d := range strings.Split(text, "\n---") {
			var o map[string]any
			if err := yaml.Unmarshal([]byte(d), &o); err != nil {
				t.Fatalf("%s: rendered %s does not parse: %v\n%s", c.Name, file, err, d)
			}
			if len(o) > 0 {
				byKind[str(o, "kind")] = append(byKind[str(o, "kind")], o)
			}
		}
	}
	return byKind, nil
}

func names(objs []map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		out[str(o, "metadata", "name")] = true
	}
	return out
}

// The workloads and Services each role of pkg/bootstrap expects (its
// components table) from a release of the role's name.
var roleExpects = map[string]struct {
	release, ns                    string
	deployments, statefulsets, svc []string
	crds                           []string
}{
	"argo-cd": {"argocd", "argocd", []string{"argocd-server", "argocd-repo-server", "argocd-redis"},
		[]string{"argocd-application-controller"}, []string{"argocd-server", "argocd-repo-server"},
		[]string{"applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io"}},
	"argo-workflows": {"argo-workflows", "argo", []string{"argo-workflows-workflow-controller", "argo-workflows-server"}, nil,
		[]string{"argo-workflows-server"},
		[]string{"clusterworkflowtemplates.argoproj.io", "cronworkflows.argoproj.io", "workflows.argoproj.io", "workflowtaskresults.argoproj.io", "workflowtemplates.argoproj.io"}},
	"argo-events": {"argo-events", "argo-events", []string{"argo-events-controller-manager"}, nil, nil,
		[]string{"eventbus.argoproj.io", "eventsources.argoproj.io", "sensors.argoproj.io"}},
	"sealed-secrets": {"sealed-secrets-controller", "kube-system", []string{"sealed-secrets-controller"}, nil,
		[]string{"sealed-secrets-controller"}, []string{"sealedsecrets.bitnami.com"}},
}

func TestChartsFromReleaseManifests(t *testing.T) {
	charts, err := BuildAll(sources(t), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range charts {
		seen[c.Name+"@"+c.Version] = true
		exp, ok := roleExpects[c.Name]
		if !ok {
			t.Fatalf("unexpected chart %s", c.Name)
		}
		broken := strings.HasSuffix(c.Version, "-broken")
		values := map[string]any{}
		if c.Name == "argo-cd" {
			// What the argocd role's files/values.yaml sets.
			values = map[string]any{"configs": map[string]any{
				"cm":   map[string]any{"resource.customizations.health.example.com_Thing": "hs = {}\nreturn hs\n", "accounts.deployctl": "apiKey"},
				"rbac": map[string]any{"policy.csv": "p, role:deployctl, applications, *, default/*, allow\ng, deployctl, role:deployctl\n"},
			}}
		}
		objs, err := release(t, c, exp.release, exp.ns, values)
		if err != nil {
			t.Fatalf("%s %s: %v", c.Name, c.Version, err)
		}
		// Helm installs a chart's crds/ folder itself, before the templates.
		for f, b := range c.Files {
			if strings.HasPrefix(f, "crds/") {
				var o map[string]any
				if err := yaml.Unmarshal(b, &o); err == nil && len(o) > 0 {
					objs[str(o, "kind")] = append(objs[str(o, "kind")], o)
				}
			}
		}
		for kind, want := range map[string][]string{"Deployment": exp.deployments, "StatefulSet": exp.statefulsets, "Service": exp.svc, "CustomResourceDefinition": exp.crds} {
			have := names(objs[kind])
			for _, n := range want {
				if !have[n] {
					t.Errorf("%s %s: no %s %s (have %v)", c.Name, c.Version, kind, n, have)
				}
			}
		}
		for _, kind := range []string{"Deployment", "StatefulSet"} {
			for _, o := range objs[kind] {
				n := str(o, "metadata", "name")
				if str(o, "metadata", "labels", "app.kubernetes.io/instance") != exp.release ||
					str(o, "spec", "template", "metadata", "labels", "app.kubernetes.io/instance") != exp.release {
					t.Errorf("%s: %s %s lacks app.kubernetes.io/instance=%s on itself or its pods", c.Name, kind, n, exp.release)
				}
				if ns := str(o, "metadata", "namespace"); ns != "" && ns != exp.ns {
					t.Errorf("%s: %s %s in namespace %s, want the release's", c.Name, kind, n, ns)
				}
				for _, ct := range containers(o) {
					img, _ := ct["image"].(string)
					if !strings.HasPrefix(img, "local.test/") {
						t.Errorf("%s: %s %s container %v runs %q, not a local image", c.Name, kind, n, ct["name"], img)
					}
					if broken != strings.HasSuffix(img, "-broken") {
						t.Errorf("%s %s: %s %s container %v image %q", c.Name, c.Version, kind, n, ct["name"], img)
					}
				}
			}
		}
		for _, o := range objs["ClusterRoleBinding"] {
			for _, s := range o["subjects"].([]any) {
				if m := s.(map[string]any); m["kind"] == "ServiceAccount" && m["namespace"] != exp.ns {
					t.Errorf("%s: ClusterRoleBinding %s binds %v/%v, want namespace %s", c.Name, str(o, "metadata", "name"), m["namespace"], m["name"], exp.ns)
				}
			}
		}
		switch c.Name {
		case "argo-cd":
			cms := map[string]map[string]any{}
			for _, o := range objs["ConfigMap"] {
				cms[str(o, "metadata", "name")] = o
			}
			if str(cms["argocd-cm"], "data", "accounts.deployctl") != "apiKey" ||
				!strings.Contains(str(cms["argocd-cm"], "data", "resource.customizations.health.example.com_Thing"), "return hs") {
				t.Errorf("argo-cd: argocd-cm does not carry configs.cm: %v", cms["argocd-cm"]["data"])
			}
			if !strings.Contains(str(cms["argocd-rbac-cm"], "data", "policy.csv"), "g, deployctl, role:deployctl") {
				t.Errorf("argo-cd: argocd-rbac-cm does not carry configs.rbac: %v", cms["argocd-rbac-cm"]["data"])
			}
			for _, o := range objs["Deployment"] {
				if str(o, "metadata", "name") == "argocd-dex-server" {
					t.Error("argo-cd: Dex is not built here, yet its Deployment is in the chart")
				}
			}
			for _, o := range objs["Deployment"] {
				for _, ct := range containers(o) {
					env, _ := json.Marshal(ct["env"])
					if strings.HasPrefix(str(ct, "image"), "local.test/argocd:") && !strings.Contains(string(env), `{"name":"ARGOCD_GPG_ENABLED","value":"false"}`) {
						t.Errorf("argo-cd: %s container %v: GnuPG not disabled (the image has no gpg)", str(o, "metadata", "name"), ct["name"])
					}
				}
			}
			if len(objs["Secret"]) == 0 || !names(objs["Secret"])["argocd-redis"] {
				t.Error("argo-cd: no argocd-redis Secret (its password)")
			}
		case "argo-workflows":
			for _, o := range objs["Deployment"] {
				if str(o, "metadata", "name") != "argo-workflows-workflow-controller" {
					continue
				}
				args := containers(o)[0]["args"].([]any)
				if len(args) < 2 || args[len(args)-3] != "local.test/argoexec:v4.0.7"+map[bool]string{true: "-broken"}[broken] {
					t.Errorf("argo-workflows: controller args %v do not name the local executor image", args)
				}
			}
		case "argo-events":
			for _, o := range objs["ConfigMap"] {
				cfg := str(o, "data", "controller-config.yaml")
				if cfg == "" {
					continue
				}
				var parsed map[string]any
				if err := yaml.Unmarshal([]byte(cfg), &parsed); err != nil {
					t.Fatalf("argo-events: controller-config.yaml: %v", err)
				}
				if stan, _ := parsed["eventBus"].(map[string]any)["nats"].(map[string]any)["versions"].([]any); len(stan) == 0 {
					t.Error("argo-events: no eventBus.nats.versions: the controller refuses such a config")
				}
				vs := parsed["eventBus"].(map[string]any)["jetstream"].(map[string]any)["versions"].([]any)
				if len(vs) != 1 || vs[0].(map[string]any)["version"] != "2.10.10" || vs[0].(map[string]any)["natsImage"] != "local.test/nats:v2.15.3" {
					t.Errorf("argo-events: jetstream versions %v", vs)
				}
			}
			env := containers(objs["Deployment"][0])[0]["env"].([]any)
			if v := env[0].(map[string]any)["value"]; !strings.HasPrefix(v.(string), "local.test/argo-events:") {
				t.Errorf("argo-events: ARGO_EVENTS_IMAGE %v", v)
			}
			// The EventSource and Sensor pods' local image is never pulled.
			if last := env[len(env)-1].(map[string]any); last["name"] != "IMAGE_PULL_POLICY" || last["value"] != "IfNotPresent" {
				t.Errorf("argo-events: the controller's last env is %v, want IMAGE_PULL_POLICY=IfNotPresent", last)
			}
		}
		// A value the chart would ignore is refused (values.schema.json);
		// the sealed-secrets chart is upstream's, with its own rules.
		if c.Name != "sealed-secrets" {
			if _, err := release(t, c, exp.release, exp.ns, map[string]any{"notAValue": true}); err == nil {
				t.Errorf("%s: a value the chart does not honour was accepted", c.Name)
			}
		}
	}
	for _, want := range []string{"argo-cd@3.6.1", "argo-workflows@4.0.7", "argo-workflows@4.0.7-broken", "argo-events@1.9.7", "sealed-secrets@2.16.0"} {
		if !seen[want] {
			t.Errorf("no chart %s among %v", want, seen)
		}
	}

	// The repository: archives and an index helm reads.
	dir := t.TempDir()
	var archives []string
	for _, c := range charts {
		p, err := c.Package(dir)
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, p)
	}
	if err := WriteIndex(dir, "http://127.0.0.1:8879", charts, archives); err != nil {
		t.Fatal(err)
	}
	idx, err := repo.LoadIndexFile(filepath.Join(dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cv, err := idx.Get("argo-workflows", "4.0.7-broken")
	if err != nil || cv.URLs[0] != "http://127.0.0.1:8879/argo-workflows-4.0.7-broken.tgz" {
		t.Errorf("index: argo-workflows 4.0.7-broken: %v %v", cv, err)
	}
	// Deterministic: the same sources give the same archive bytes.
	again, err := BuildAll(sources(t), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	d2 := t.TempDir()
	for i, c := range again {
		p, err := c.Package(d2)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(archives[i])
		b, _ := os.ReadFile(p)
		if !bytes.Equal(a, b) {
			t.Errorf("%s %s: two builds differ", c.Name, c.Version)
		}
	}
	_ = chart.APIVersionV2
}
