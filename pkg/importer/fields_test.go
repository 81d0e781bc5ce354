package importer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/manifest"
)

// importApps imports the given Application documents (YAML, one file).
func importApps(t *testing.T, docs string) (*Result, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "apps.yaml")
	if err := os.WriteFile(f, []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := appread.Read([]string{f})
	if err != nil {
		t.Fatal(err)
	}
	return Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "parent"}})
}

// oneApp is an Application with the given source options and spec fields.
func oneApp(source, spec string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: web}
  source:
    repoURL: https://git.example.com/p.git
    targetRevision: main
` + source + spec
}

// Every field of Argo CD v3.6's source, sources, syncPolicy, info,
// ignoreDifferences and revisionHistoryLimit that the spec models comes
// back from the generated Application as it was: one row per field.
func TestFieldsRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, source, spec, want string }{
		{"helm.ignoreMissingValueFiles", "    path: chart\n    helm: {valueFiles: [values-prod.yaml], ignoreMissingValueFiles: true}\n", "", "ignoreMissingValueFiles: true"},
		{"helm.valuesObject", "    path: chart\n    helm: {valuesObject: {replicas: 2, image: {tag: v1}}}\n", "", "valuesObject:"},
		{"helm.fileParameters", "    path: chart\n    helm: {fileParameters: [{name: config, path: files/config.json}]}\n", "", "fileParameters:"},
		{"helm.skipCrds", "    path: chart\n    helm: {skipCrds: true}\n", "", "skipCrds: true"},
		{"helm.skipSchemaValidation", "    path: chart\n    helm: {skipSchemaValidation: true}\n", "", "skipSchemaValidation: true"},
		{"helm.skipTests", "    path: chart\n    helm: {skipTests: true}\n", "", "skipTests: true"},
		{"helm.namespace", "    path: chart\n    helm: {namespace: other}\n", "", "namespace: other"},
		{"helm.kubeVersion", "    path: chart\n    helm: {kubeVersion: 1.30.0}\n", "", "kubeVersion: 1.30.0"},
		{"helm.apiVersions", "    path: chart\n    helm: {apiVersions: [monitoring.coreos.com/v1]}\n", "", "monitoring.coreos.com/v1"},
		{"helm.passCredentials", "    path: chart\n    helm: {passCredentials: true}\n", "", "passCredentials: true"},
		{"helm.releaseName", "    path: chart\n    helm: {releaseName: web-prod}\n", "", "releaseName: web-prod"},
		{"helm.version", "    path: chart\n    helm: {version: v3}\n", "", "version: v3"},
		{"helm.parameters", "    path: chart\n    helm: {parameters: [{name: a, value: '1', forceString: true}]}\n", "", "forceString: true"},
		{"helm.values", "    path: chart\n    helm: {values: 'a: 1'}\n", "", "values: 'a: 1'"},
		{"kustomize.patches", "    path: k\n    kustomize: {patches: [{patch: '- op: remove', target: {kind: Deployment}}]}\n", "", "patches:"},
		{"kustomize.components", "    path: k\n    kustomize: {components: [../c]}\n", "", "components:"},
		{"kustomize.replicas", "    path: k\n    kustomize: {replicas: [{name: web, count: 3}, {name: api, count: '2'}]}\n", "", "replicas:"},
		{"kustomize.images", "    path: k\n    kustomize: {images: ['nginx=nginx:1.27']}\n", "", "nginx=nginx:1.27"},
		{"kustomize.namePrefix/Suffix", "    path: k\n    kustomize: {namePrefix: a-, nameSuffix: -b}\n", "", "nameSuffix: -b"},
		{"kustomize.commonLabels/Annotations", "    path: k\n    kustomize: {commonLabels: {team: web}, commonAnnotations: {owner: web}}\n", "", "commonAnnotations:"},
		{"kustomize.labelWithoutSelector", "    path: k\n    kustomize: {labelWithoutSelector: true}\n", "", "labelWithoutSelector: true"},
		{"kustomize.forceCommon*", "    path: k\n    kustomize: {forceCommonLabels: true, forceCommonAnnotations: true, commonAnnotationsEnvsubst: true}\n", "", "forceCommonAnnotations: true"},
		{"kustomize.namespace", "    path: k\n    kustomize: {namespace: web}\n", "", "namespace: web"},
		{"kustomize.version", "    path: k\n    kustomize: {version: v5.4.3}\n", "", "version: v5.4.3"},
		{"kustomize.kubeVersion/apiVersions", "    path: k\n    kustomize: {kubeVersion: 1.30.0, apiVersions: [v1]}\n", "", "apiVersions:"},
		{"directory", "    path: d\n    directory: {recurse: true, include: '*.yaml', exclude: 'x/*'}\n", "", "recurse: true"},
		{"directory.jsonnet", "    path: d\n    directory: {jsonnet: {extVars: [{name: a, value: b}], tlas: [{name: c, value: '1', code: true}], libs: [vendor]}}\n", "", "jsonnet:"},
		{"plugin", "    path: p\n    plugin: {name: envsubst, env: [{name: A, value: b}], parameters: [{name: s, string: x}, {name: m, map: {k: v}}, {name: l, array: [a, b]}]}\n", "", "plugin:"},
		{"source.name", "    path: p\n    name: main\n", "", "name: main"},
		{"revisionHistoryLimit", "    path: p\n", "  revisionHistoryLimit: 3\n", "revisionHistoryLimit: 3"},
		{"syncPolicy", "    path: p\n", "  syncPolicy:\n    automated: {prune: true, selfHeal: true, allowEmpty: true}\n    syncOptions: [CreateNamespace=true]\n" +
			"    retry: {limit: 2, backoff: {duration: 5s, factor: 2, maxDuration: 3m}}\n    managedNamespaceMetadata: {labels: {a: b}, annotations: {c: d}}\n", "managedNamespaceMetadata:"},
		{"ignoreDifferences wildcards", "    path: p\n", "  ignoreDifferences: [{group: '*', kind: '*', managedFieldsManagers: [kube-controller-manager]}]\n", "managedFieldsManagers:"},
		{"info", "    path: p\n", "  info: [{name: owner, value: web}]\n", "{name: owner, value: web}"},
		// Argo CD 3's, which the linked v2 type has no place for
		// (compile.Application carries them beside it).
		{"source.tagPrefix", "    path: p\n    tagPrefix: app1/\n", "", "tagPrefix: app1/"},
		{"kustomize.ignoreMissingComponents", "    path: k\n    kustomize: {components: [../c], ignoreMissingComponents: true}\n", "", "ignoreMissingComponents: true"},
		{"kustomize.labelIncludeTemplates", "    path: k\n    kustomize: {commonLabels: {a: b}, labelIncludeTemplates: true}\n", "", "labelIncludeTemplates: true"},
		{"kustomize v3 fields alone", "    path: k\n    kustomize: {ignoreMissingComponents: true}\n", "", "ignoreMissingComponents: true"},
		{"directory.disableExtensionFilter", "    path: d\n    directory: {disableExtensionFilter: true, include: '{*.yaml.sealed,*.yaml}'}\n", "", "disableExtensionFilter: true"},
		{"retry.refresh", "    path: p\n", "  syncPolicy: {retry: {limit: 2, refresh: true}}\n", "refresh: true"},
		{"retry.refresh alone", "    path: p\n", "  syncPolicy: {retry: {refresh: true}}\n", "refresh: true"},
		{"automated.enabled: false", "    path: p\n", "  syncPolicy: {automated: {enabled: false, prune: true}}\n", "automated: {prune: true, enabled: false}"},
		{"automated.enabled: true", "    path: p\n", "  syncPolicy: {automated: {enabled: true}}\n", "enabled: true"},
		{"sources[1].tagPrefix", "", "  sources:\n  - {repoURL: https://git.example.com/p.git, targetRevision: main, path: a}\n" +
			"  - {repoURL: https://git.example.com/q.git, targetRevision: '1.0.*', tagPrefix: q/, path: b, directory: {disableExtensionFilter: true}}\n", "tagPrefix: q/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := importApps(t, oneApp(tc.source, tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Differences) > 0 {
				t.Errorf("lost: %v", r.Differences)
			}
			if !bytes.Contains(r.YAML, []byte(tc.want)) {
				t.Errorf("no %q in\n%s", tc.want, r.YAML)
			}
			writeAndLoad(t, r)
		})
	}
}

// Argo CD's default revisionHistoryLimit is no lost field: the spec leaves
// it out, and the generated Application means the same.
func TestDefaultRevisionHistoryLimitNotLost(t *testing.T) {
	r, err := importApps(t, oneApp("    path: p\n", "  revisionHistoryLimit: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Differences) > 0 || bytes.Contains(r.YAML, []byte("revisionHistoryLimit")) {
		t.Errorf("differences %v in\n%s", r.Differences, r.YAML)
	}
}

// A source beside sources is what Argo CD ignores: dropped with that
// reason, not reported as something the spec cannot express.
func TestSourceBesideSourcesDropped(t *testing.T) {
	r, err := importApps(t, oneApp("    path: ignored\n", "  sources:\n  - {repoURL: https://git.example.com/p.git, targetRevision: main, path: used}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Differences) > 0 {
		t.Errorf("differences %v", r.Differences)
	}
	want := "1 app set spec.source beside spec.sources: Argo CD ignores source when sources is set, so it is dropped as Argo CD drops it: web"
	if !hasNote(r, want) {
		t.Errorf("no note %q in %v", want, r.Notes)
	}
	if bytes.Contains(r.YAML, []byte("ignored")) || !strings.Contains(string(r.YAML), "path: used") {
		t.Errorf("spec:\n%s", r.YAML)
	}
}

// What the spec does not model (README "Import"): the source hydrator.
// It is reported as lost.
func TestNotModelledReported(t *testing.T) {
	r, err := importApps(t, oneApp("    path: p\n", "  sourceHydrator: {drySource: {repoURL: r, path: p, targetRevision: main}, syncSource: {targetBranch: env, path: p}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, d := range r.Differences {
		fields = append(fields, d.Field)
	}
	if len(fields) != 1 || fields[0] != "spec.sourceHydrator" {
		t.Errorf("lost %v, want [spec.sourceHydrator]", fields)
	}
}

// Argo CD 3's fields reach the generated Application at their places, as
// Argo CD reads them: `automated: {enabled: false}` keeps automated (and
// its prune) with enabled false, which Argo CD reads as automation off.
func TestArgoCD3FieldsInApplication(t *testing.T) {
	docs := oneApp("    path: p\n    tagPrefix: app1/\n    kustomize: {ignoreMissingComponents: true, labelIncludeTemplates: true}\n",
		"  syncPolicy: {automated: {enabled: false, prune: true}, retry: {limit: 1, refresh: true}}\n") +
		"---\n" + strings.ReplaceAll(oneApp("    path: d\n    directory: {disableExtensionFilter: true}\n", ""), "name: web", "name: api")
	r, err := importApps(t, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Differences) > 0 {
		t.Fatalf("lost: %v", r.Differences)
	}
	apps := generatedApps(t, r)
	for _, c := range []struct {
		app  string
		path []string
		want any
	}{
		{"web", []string{"spec", "source", "tagPrefix"}, "app1/"},
		{"web", []string{"spec", "source", "kustomize", "ignoreMissingComponents"}, true},
		{"web", []string{"spec", "source", "kustomize", "labelIncludeTemplates"}, true},
		{"web", []string{"spec", "syncPolicy", "automated", "enabled"}, false},
		{"web", []string{"spec", "syncPolicy", "automated", "prune"}, true},
		{"web", []string{"spec", "syncPolicy", "retry", "refresh"}, true},
		{"web", []string{"spec", "syncPolicy", "retry", "limit"}, 1.0},
		{"api", []string{"spec", "source", "directory", "disableExtensionFilter"}, true},
	} {
		var v any = apps[c.app]
		for _, k := range c.path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		if v != c.want {
			t.Errorf("%s: %s = %v, want %v", c.app, strings.Join(c.path, "."), v, c.want)
		}
	}
	if _, ok := apps["api"]["spec"].(map[string]any)["syncPolicy"]; ok {
		t.Errorf("api has a syncPolicy: %v", apps["api"]["spec"])
	}
}

// generatedApps compiles an import's spec and returns its Applications as
// the step receives them (manifest.JSON, the deploy task's manifest), by
// name.
func generatedApps(t *testing.T, r *Result) map[string]map[string]any {
	t.Helper()
	out, err := compile.Compile(writeAndLoad(t, r), "platform")
	if err != nil {
		t.Fatal(err)
	}
	apps := map[string]map[string]any{}
	for _, a := range out.Applications {
		raw, err := manifest.JSON(a)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		apps[a.Name] = obj
	}
	return apps
}

// What Argo CD's create refuses (its Go validation, beyond the CRD: the
// differential test in ./receiver checks it with Argo CD's own code when
// given) the import refuses, naming why; what it accepts, it imports.
func TestArgoCDCreateRules(t *testing.T) {
	for _, tc := range []struct {
		name, doc, refusal string
	}{
		{"no destination server or name", strings.Replace(oneApp("    path: p\n", ""), "server: https://kubernetes.default.svc, ", "", 1), "Destination server missing"},
		{"two source types", oneApp("    path: p\n    helm: {}\n    directory: {recurse: true}\n", ""), "sets helm and directory: Argo CD refuses it"},
		{"managed-by-url not http", strings.Replace(oneApp("    path: p\n", ""), "namespace: argocd}", "namespace: argocd, annotations: {argocd.argoproj.io/managed-by-url: 'ftp://x'}}", 1), "is not an http or https URL"},
		{"managed-by-url https", strings.Replace(oneApp("    path: p\n", ""), "namespace: argocd}", "namespace: argocd, annotations: {argocd.argoproj.io/managed-by-url: 'https://cd.example.com'}}", 1), ""},
		{"chart and path", oneApp("    path: p\n    chart: web\n", ""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := importApps(t, tc.doc)
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refusal == "" && len(r.Differences) > 0:
				t.Errorf("lost: %v", r.Differences)
			case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
				t.Errorf("error %v, want %q", err, tc.refusal)
			}
		})
	}
}
