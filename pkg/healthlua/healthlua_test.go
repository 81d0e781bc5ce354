package healthlua

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	argocdlua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/argo-cd/v2/util/settings"
	"github.com/argoproj/gitops-engine/pkg/health"
	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/spec"
)

func TestMain(m *testing.M) {
	// Argo CD's settings manager logs every informer start at info level.
	log.SetLevel(log.WarnLevel)
	os.Exit(m.Run())
}

// fixtureSuite is testdata/<group>_<kind>/health_test.yaml, in the format of
// Argo CD's own resource_customizations tests.
type fixtureSuite struct {
	Tests []struct {
		InputPath    string              `json:"inputPath"`
		Options      spec.HealthOptions  `json:"options"`
		HealthStatus health.HealthStatus `json:"healthStatus"`
	} `json:"tests"`
}

// examplePlatform has the custom Widget script of testdata beside the
// built-ins.
func examplePlatform(t *testing.T, opts spec.HealthOptions) *spec.Platform {
	t.Helper()
	widget, err := os.ReadFile("testdata/example.com_Widget/health.lua")
	if err != nil {
		t.Fatal(err)
	}
	return &spec.Platform{
		APIVersion: spec.APIVersion,
		Kind:       spec.Kind,
		Metadata:   spec.Metadata{Name: "reference-platform"},
		Spec: spec.PlatformSpec{
			ArgoCD:               spec.ArgoCD{Namespace: "argocd", Server: "argocd-server.argocd.svc:443"},
			Workflow:             spec.Workflow{Namespace: "argo", ServiceAccount: "deployctl", Image: "registry.example.com/deployctl:1.0.0"},
			HealthCustomizations: []spec.HealthCustomization{{Group: "example.com", Kind: "Widget", Lua: string(widget)}},
			HealthOptions:        opts,
		},
	}
}

// overridesFromGenerated loads the generated argocd-cm patch into a fake
// cluster and reads it back with Argo CD's settings manager, so the keys are
// parsed exactly as the Argo CD controller parses them.
func overridesFromGenerated(t *testing.T, p *spec.Platform) argocdlua.ResourceHealthOverrides {
	t.Helper()
	files, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(files[PatchFile], &cm); err != nil {
		t.Fatalf("%s does not decode strictly as a ConfigMap: %v", PatchFile, err)
	}
	if cm.Name != "argocd-cm" || cm.Namespace != p.Spec.ArgoCD.Namespace {
		t.Fatalf("patch targets %s/%s, want %s/argocd-cm", cm.Namespace, cm.Name, p.Spec.ArgoCD.Namespace)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "argocd-secret", Namespace: cm.Namespace,
		Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"},
	}}
	client := fake.NewClientset(&cm, secret)
	mgr := settings.NewSettingsManager(context.Background(), client, cm.Namespace)
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		t.Fatalf("Argo CD rejects the generated argocd-cm: %v", err)
	}
	return overrides
}

func loadObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// TestScriptsWithArgoCDLuaEngine runs every customization (built-ins and the
// example custom one) through Argo CD's Lua health engine, the way the
// application controller does: overrides from argocd-cm, GetHealthScript,
// ExecuteHealthLua without the open libraries.
func TestScriptsWithArgoCDLuaEngine(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/health_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]map[health.HealthStatusCode]bool{}
	missingStatus := map[string]bool{}
	for _, suitePath := range dirs {
		dir := filepath.Dir(suitePath)
		b, err := os.ReadFile(suitePath)
		if err != nil {
			t.Fatal(err)
		}
		var suite fixtureSuite
		if err := yaml.UnmarshalStrict(b, &suite); err != nil {
			t.Fatalf("%s: %v", suitePath, err)
		}
		for _, tc := range suite.Tests {
			tc := tc
			name := filepath.Base(dir) + "/" + tc.InputPath
			if tc.Options.CephAcceptHealthWarn {
				name += "/cephAcceptHealthWarn"
			}
			t.Run(name, func(t *testing.T) {
				p := examplePlatform(t, tc.Options)
				overrides := overridesFromGenerated(t, p)
				obj := loadObject(t, filepath.Join(dir, tc.InputPath))
				gvk := obj.GroupVersionKind()
				key := Key(gvk.Group, gvk.Kind)

				vm := argocdlua.VM{ResourceOverrides: overrides}
				script, useOpenLibs, err := vm.GetHealthScript(obj)
				if err != nil {
					t.Fatal(err)
				}
				if script == "" {
					t.Fatalf("Argo CD finds no health script for %s", gvk.GroupKind())
				}
				if useOpenLibs {
					t.Fatalf("%s must run without the open Lua libraries", key)
				}
				want := generatedScript(t, p, key)
				if script != want {
					t.Fatalf("Argo CD picked a script other than the generated %s", key)
				}
				got, err := vm.ExecuteHealthLua(obj, script)
				if err != nil {
					t.Fatalf("Lua error: %v", err)
				}
				if *got != tc.HealthStatus {
					t.Fatalf("health = %+v, want %+v", *got, tc.HealthStatus)
				}
				// The controller's entry point gives the same answer.
				viaController, err := overrides.GetResourceHealth(obj)
				if err != nil || viaController == nil || *viaController != *got {
					t.Fatalf("GetResourceHealth = %+v, %v; want %+v", viaController, err, *got)
				}
			})
			key := keyOfDir(filepath.Base(dir))
			if covered[key] == nil {
				covered[key] = map[health.HealthStatusCode]bool{}
			}
			covered[key][tc.HealthStatus.Status] = true
			if strings.HasPrefix(tc.InputPath, "missing-status") {
				missingStatus[key] = true
			}
		}
	}

	// Every generated script has fixtures for Healthy, Progressing, Degraded
	// and an object without status.
	cs, err := Customizations(examplePlatform(t, spec.HealthOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		for _, st := range []health.HealthStatusCode{health.HealthStatusHealthy, health.HealthStatusProgressing, health.HealthStatusDegraded} {
			if !covered[c.Key][st] {
				t.Errorf("%s: no fixture expects %s", c.Key, st)
			}
		}
		if !missingStatus[c.Key] {
			t.Errorf("%s: no missing-status fixture", c.Key)
		}
	}
}

func generatedScript(t *testing.T, p *spec.Platform, key string) string {
	t.Helper()
	data, err := ConfigMapData(p)
	if err != nil {
		t.Fatal(err)
	}
	return data[key]
}

// keyOfDir maps testdata/<group>_<kind> to the argocd-cm key.
func keyOfDir(dir string) string { return KeyPrefix + dir }

func TestCustomizationsSortedAndKeyed(t *testing.T) {
	cs, err := Customizations(examplePlatform(t, spec.HealthOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range cs {
		keys = append(keys, c.Key)
	}
	want := []string{
		"resource.customizations.health.acid.zalan.do_postgresql",
		"resource.customizations.health.argoproj.io_Application",
		"resource.customizations.health.ceph.rook.io_CephCluster",
		"resource.customizations.health.example.com_Widget",
	}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys = %v, want %v", keys, want)
	}
	if !sort.StringsAreSorted(keys) {
		t.Fatal("not sorted")
	}
	if cs[3].Source != FromSpec || cs[0].Source != BuiltIn {
		t.Fatalf("sources = %v, %v", cs[0].Source, cs[3].Source)
	}
	if got := Key("", "ConfigMap"); got != "resource.customizations.health.ConfigMap" {
		t.Fatalf("core group key = %q", got)
	}
}

func TestSpecEntryReplacesBuiltIn(t *testing.T) {
	p := examplePlatform(t, spec.HealthOptions{})
	own := `hs = {status = "Healthy", message = "mine"} return hs`
	p.Spec.HealthCustomizations = append(p.Spec.HealthCustomizations, spec.HealthCustomization{Group: "ceph.rook.io", Kind: "CephCluster", Lua: own})
	data, err := ConfigMapData(p)
	if err != nil {
		t.Fatal(err)
	}
	if data[Key("ceph.rook.io", "CephCluster")] != own {
		t.Fatal("the spec's CephCluster script did not replace the built-in one")
	}
}

func TestInvalidCustomizationsNameTheEntry(t *testing.T) {
	cases := []struct {
		name string
		hc   []spec.HealthCustomization
		want string
	}{
		{"syntax", []spec.HealthCustomization{{Group: "example.com", Kind: "Gadget", Lua: "hs = { return hs"}},
			"spec.healthCustomizations[1] (example.com/Gadget): Lua does not compile"},
		{"empty", []spec.HealthCustomization{{Group: "example.com", Kind: "Gadget", Lua: "  "}},
			"spec.healthCustomizations[1] (example.com/Gadget): lua is empty"},
		{"underscore kind", []spec.HealthCustomization{{Group: "example.com", Kind: "Gad_get", Lua: "return {}"}},
			"spec.healthCustomizations[1] (example.com/Gad_get): kind"},
		{"bad group", []spec.HealthCustomization{{Group: "Example_com", Kind: "Gadget", Lua: "return {}"}},
			"spec.healthCustomizations[1] (Example_com/Gadget): group"},
		{"duplicate", []spec.HealthCustomization{{Group: "example.com", Kind: "Widget", Lua: "return {}"}},
			"spec.healthCustomizations[1] (example.com/Widget): same group/kind as spec.healthCustomizations[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := examplePlatform(t, spec.HealthOptions{})
			p.Spec.HealthCustomizations = append(p.Spec.HealthCustomizations, tc.hc...)
			_, err := Files(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFilesDeterministicAndConsistent(t *testing.T) {
	p := examplePlatform(t, spec.HealthOptions{CephAcceptHealthWarn: true})
	a, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 3 {
		t.Fatalf("files = %d, want 3", len(a))
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Fatalf("%s differs between two runs", name)
		}
	}

	// The Helm values carry exactly the argocd-cm data.
	var values struct {
		Configs struct {
			CM map[string]string `json:"cm"`
		} `json:"configs"`
	}
	if err := yaml.UnmarshalStrict(a[HelmValuesFile], &values); err != nil {
		t.Fatal(err)
	}
	data, err := ConfigMapData(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(values.Configs.CM, data) {
		t.Fatal("helm values differ from the argocd-cm data")
	}
	if !strings.Contains(values.Configs.CM[Key("ceph.rook.io", "CephCluster")], "local acceptHealthWarn = true") {
		t.Fatal("cephAcceptHealthWarn did not reach the CephCluster script")
	}

	var kust struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Patches    []struct {
			Path string `json:"path"`
		} `json:"patches"`
	}
	if err := yaml.UnmarshalStrict(a[KustomizationFile], &kust); err != nil {
		t.Fatal(err)
	}
	if kust.Kind != "Component" || len(kust.Patches) != 1 || kust.Patches[0].Path != PatchFile {
		t.Fatalf("kustomization = %+v", kust)
	}
}

func TestFilesNeedArgoCDNamespace(t *testing.T) {
	p := examplePlatform(t, spec.HealthOptions{})
	p.Spec.ArgoCD.Namespace = ""
	if _, err := Files(p); err == nil {
		t.Fatal("want an error without spec.argocd.namespace")
	}
}
