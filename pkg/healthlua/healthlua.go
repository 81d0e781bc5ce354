// Package healthlua generates the Argo CD health customizations of a platform:
// the argocd-cm keys resource.customizations.health.<group>_<kind> holding
// Lua health scripts (INV-7, docs/requirements.md#inv-7-health-verification-accuracy).
//
// Built in, from templates/health/*.lua:
//
//   - argoproj.io/Application: the health of a nested Application (app of
//     apps). Argo CD removed this check in 1.8; without it a parent
//     Application reports Healthy while its children are still Progressing or
//     Degraded.
//   - ceph.rook.io/CephCluster: Healthy when the operator reports Ready and
//     Ceph reports HEALTH_OK; HEALTH_WARN counts as Healthy only when the spec
//     sets healthOptions.cephAcceptHealthWarn.
//   - acid.zalan.do/postgresql: the Zalando operator's
//     status.PostgresClusterStatus (Running is Healthy). That status has no
//     replica counts; gate on replicas with a resource health check on the
//     operator's StatefulSet.
//
// Every spec.healthCustomizations entry is added beside them (an entry for
// the same group/kind replaces the built-in one). Each script must compile;
// the error names the entry.
//
// Lua only sees the object it is given. Vault's sealed state is therefore not
// left to Lua: a sealed Vault still has Ready pods and healthy objects. The
// orchestration covers it with the step's HTTP check on /v1/sys/health, which
// answers 200 only when Vault is initialized, unsealed and active (429
// standby, 472/473 performance/DR secondary, 501 not initialized, 503
// sealed), e.g. healthChecks: [{http: {url:
// "http://vault.vault.svc:8200/v1/sys/health", expectStatus: [200]}}].
//
// The output goes to generated/<platform>/argocd/: a kustomize Component that
// patches argocd-cm, and the same keys as Helm values of the argo-cd chart
// (configs.cm), which the Ansible bootstrap passes to the chart.
package healthlua

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/templates"
)

// KeyPrefix starts every argocd-cm health customization key.
const KeyPrefix = "resource.customizations.health."

// File names written into generated/<platform>/argocd/.
const (
	PatchFile         = "argocd-cm-health-patch.yaml"
	HelmValuesFile    = "helm-values-health.yaml"
	KustomizationFile = "kustomization.yaml"
)

// Source says where a customization comes from.
type Source string

// Sources of a customization.
const (
	BuiltIn  Source = "built-in"
	FromSpec Source = "spec"
)

// Customization is one argocd-cm health script.
type Customization struct {
	Group string
	Kind  string
	// Key is the argocd-cm key, resource.customizations.health.<group>_<kind>
	// (resource.customizations.health.<kind> for the core group).
	Key    string
	Lua    string
	Source Source
}

// builtin is one script shipped under templates/health/.
type builtin struct {
	group, kind string
}

var builtins = []builtin{
	{"argoproj.io", "Application"},
	{"ceph.rook.io", "CephCluster"},
	{"acid.zalan.do", "postgresql"},
}

// cephWarnLine is the line of the CephCluster script that the spec's
// healthOptions.cephAcceptHealthWarn switches.
const cephWarnLine = "local acceptHealthWarn = false -- deployctl:cephAcceptHealthWarn"

// Key returns the argocd-cm key of a group/kind, the way Argo CD parses it.
func Key(group, kind string) string {
	if group == "" {
		return KeyPrefix + kind
	}
	return KeyPrefix + group + "_" + kind
}

// Customizations returns the built-in scripts and the spec's, sorted by key.
func Customizations(p *spec.Platform) ([]Customization, error) {
	byKey := map[string]Customization{}
	for _, b := range builtins {
		name := "health/" + b.group + "_" + b.kind + ".lua"
		src, err := fs.ReadFile(templates.FS, name)
		if err != nil {
			return nil, fmt.Errorf("built-in health script %s: %w", name, err)
		}
		script := string(src)
		if b.group == "ceph.rook.io" {
			if strings.Count(script, cephWarnLine) != 1 {
				return nil, fmt.Errorf("built-in health script %s: missing the line %q", name, cephWarnLine)
			}
			if p.Spec.HealthOptions.CephAcceptHealthWarn {
				script = strings.Replace(script, cephWarnLine,
					"local acceptHealthWarn = true -- healthOptions.cephAcceptHealthWarn", 1)
			}
		}
		if err := compile(script, name); err != nil {
			return nil, err
		}
		c := Customization{Group: b.group, Kind: b.kind, Key: Key(b.group, b.kind), Lua: script, Source: BuiltIn}
		byKey[c.Key] = c
	}

	fromSpec := map[string]int{}
	for i, hc := range p.Spec.HealthCustomizations {
		where := fmt.Sprintf("spec.healthCustomizations[%d] (%s)", i, groupKind(hc.Group, hc.Kind))
		// The same rules as the spec's validation (spec.CheckGroup,
		// CheckKind, CheckLua), which reports them with their line.
		if err := spec.CheckGroup(hc.Group); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if err := spec.CheckKind(hc.Kind); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		key := Key(hc.Group, hc.Kind)
		if j, dup := fromSpec[key]; dup {
			return nil, fmt.Errorf("%s: same group/kind as spec.healthCustomizations[%d]", where, j)
		}
		fromSpec[key] = i
		if err := compile(hc.Lua, where); err != nil {
			return nil, err
		}
		byKey[key] = Customization{Group: hc.Group, Kind: hc.Kind, Key: key, Lua: hc.Lua, Source: FromSpec}
	}

	out := make([]Customization, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// ConfigMapData returns the argocd-cm keys and scripts.
func ConfigMapData(p *spec.Platform) (map[string]string, error) {
	cs, err := Customizations(p)
	if err != nil {
		return nil, err
	}
	data := make(map[string]string, len(cs))
	for _, c := range cs {
		data[c.Key] = c.Lua
	}
	return data, nil
}

// HelmValues returns the argo-cd chart values that set the scripts:
// configs.cm."resource.customizations.health.<group>_<kind>".
func HelmValues(p *spec.Platform) (map[string]any, error) {
	data, err := ConfigMapData(p)
	if err != nil {
		return nil, err
	}
	cm := make(map[string]any, len(data))
	for k, v := range data {
		cm[k] = v
	}
	return map[string]any{"configs": map[string]any{"cm": cm}}, nil
}

// configMapPatch is the strategic-merge patch of argocd-cm.
type configMapPatch struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   patchMetadata     `json:"metadata"`
	Data       map[string]string `json:"data"`
}

type patchMetadata struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels"`
}

// component is the kustomization.yaml of the folder: a kustomize Component,
// since it only patches an argocd-cm that the Argo CD install provides.
type component struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Patches    []patch `json:"patches"`
}

type patch struct {
	Path string `json:"path"`
}

// Files returns generated/<platform>/argocd/, relative to that folder.
func Files(p *spec.Platform) (map[string][]byte, error) {
	if p.Spec.ArgoCD.Namespace == "" {
		return nil, fmt.Errorf("spec.argocd.namespace is required for the argocd-cm health patch")
	}
	data, err := ConfigMapData(p)
	if err != nil {
		return nil, err
	}
	values, err := HelmValues(p)
	if err != nil {
		return nil, err
	}
	header := "# Generated by deployctl from the platform spec " + p.Metadata.Name + "; do not edit.\n"

	cm, err := yaml.Marshal(configMapPatch{
		APIVersion: "v1",
		Kind:       "ConfigMap",
		Metadata: patchMetadata{
			Name:      "argocd-cm",
			Namespace: p.Spec.ArgoCD.Namespace,
			Labels:    map[string]string{"app.kubernetes.io/part-of": "argocd"},
		},
		Data: data,
	})
	if err != nil {
		return nil, err
	}
	vals, err := yaml.Marshal(values)
	if err != nil {
		return nil, err
	}
	kust, err := yaml.Marshal(component{
		APIVersion: "kustomize.config.k8s.io/v1alpha1",
		Kind:       "Component",
		Patches:    []patch{{Path: PatchFile}},
	})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		PatchFile: append([]byte(header+
			"# Argo CD health customizations (strategic-merge patch of argocd-cm).\n"), cm...),
		HelmValuesFile: append([]byte(header+
			"# Values for the argo-cd Helm chart: the same health customizations as configs.cm keys.\n"), vals...),
		KustomizationFile: append([]byte(header+
			"# A kustomize Component: list this folder under `components:` of the Argo CD install.\n"), kust...),
	}, nil
}

// compile parses and compiles a script with gopher-lua, the Lua that Argo CD
// embeds (spec.CheckLua).
func compile(script, where string) error {
	if err := spec.CheckLua(script, where); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}
