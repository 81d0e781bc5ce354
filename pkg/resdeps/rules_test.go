package resdeps

import (
	"reflect"
	"strings"
	"testing"
)

// app parses inline YAML as one app's objects.
func app(t *testing.T, name, ns string, yml string) App {
	t.Helper()
	objs, errs := Parse(name+".yaml", []byte(yml))
	if len(errs) > 0 {
		t.Fatalf("%s: %v", name, errs)
	}
	return App{Name: name, Namespace: ns, Objects: objs}
}

const crdCert = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: certificates.cert-manager.io}
spec: {group: cert-manager.io, scope: Namespaced, names: {kind: Certificate, plural: certificates}}
`

// One case per rule, and per branch a rule takes.
func TestRules(t *testing.T) {
	type a struct{ name, ns, yml string }
	cases := []struct {
		name string
		apps []a
		want []string // flat(result), or "conflict: ..." lines
	}{
		{"crd", []a{{"cm", "", crdCert}, {"c", "x", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\n"}},
			[]string{"c → cm: CRD certificates.cert-manager.io×1"}},
		{"crd: a built-in kind needs none, an unknown kind is ignored", []a{{"cm", "", crdCert},
			{"c", "", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"}}, nil},
		{"crd: an app never depends on itself", []a{{"cm", "", crdCert + "---\napiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\n"}}, nil},
		{"crd: two providers are reported, not guessed", []a{{"cm", "", crdCert}, {"cm2", "", crdCert},
			{"c", "", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c, namespace: x}\n"}},
			[]string{"conflict: c: CRD certificates.cert-manager.io: cm, cm2"}},
		{"apiservice", []a{{"ms", "", "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1beta1.metrics.k8s.io}\nspec: {group: metrics.k8s.io, version: v1beta1, service: {name: metrics-server, namespace: kube-system}}\n"},
			{"c", "", "apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata: {name: n}\n"}},
			[]string{"c → ms: APIService v1beta1.metrics.k8s.io×1"}},
		{"storageclass: named, default, none", []a{
			{"sc", "", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\n---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: std, annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}}\n"},
			{"named", "", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p}\nspec: {storageClassName: fast}\n"},
			{"dflt", "", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p}\nspec: {}\n"},
			{"none", "", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p}\nspec: {storageClassName: \"\"}\n"},
			{"beta", "", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p, annotations: {volume.beta.kubernetes.io/storage-class: fast}}\nspec: {}\n"},
			{"sts", "", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {storageClassName: fast}\n  - metadata: {name: logs}\n    spec: {}\n"}},
			[]string{"beta → sc: StorageClass fast×1", "dflt → sc: default StorageClass std×1", "named → sc: StorageClass fast×1",
				"sts → sc: StorageClass fast×1", "sts → sc: default StorageClass std×1"}},
		{"ingressclass: spec, annotation, default", []a{
			{"nginx", "", "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: nginx, annotations: {ingressclass.kubernetes.io/is-default-class: \"true\"}}\nspec: {controller: k8s.io/ingress-nginx}\n"},
			{"spec", "", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec: {ingressClassName: nginx}\n"},
			{"anno", "", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i, annotations: {kubernetes.io/ingress.class: nginx}}\n"},
			{"dflt", "", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec: {}\n"},
			{"other", "", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec: {ingressClassName: traefik}\n"}},
			[]string{"anno → nginx: IngressClass nginx×1", "dflt → nginx: default IngressClass nginx×1", "spec → nginx: IngressClass nginx×1"}},
		{"gateway: class, then routes by parentRefs", []a{
			{"envoy", "", "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\nspec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}\n"},
			{"gw", "infra", "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: public, namespace: infra}\nspec: {gatewayClassName: eg, listeners: []}\n"},
			{"route", "web", "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: web}\nspec:\n  parentRefs:\n  - {name: public, namespace: infra}\n  - {name: public}\n  - {name: svc, kind: Service, group: \"\"}\n"}},
			[]string{"gw → envoy: GatewayClass eg×1", "route → gw: Gateway infra/public×1"}},
		{"issuer: Certificate issuerRef, Ingress annotations", []a{
			{"iss", "", "apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: ca, namespace: web}\n---\napiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: {name: le}\n"},
			{"cert", "", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c, namespace: web}\nspec: {issuerRef: {name: ca}}\n---\napiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: d, namespace: other}\nspec: {issuerRef: {name: ca}}\n"},
			{"ing", "web", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i, annotations: {cert-manager.io/cluster-issuer: le}}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: j, annotations: {cert-manager.io/issuer: le, cert-manager.io/issuer-kind: ClusterIssuer}}\n"},
			{"ext", "", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c, namespace: web}\nspec: {issuerRef: {name: ca, kind: AWSPCAIssuer, group: awspca.cert-manager.io}}\n"}},
			[]string{"cert → iss: Issuer web/ca×1", "ing → iss: ClusterIssuer le×2"}},
		{"secretstore: store refs", []a{
			{"stores", "", "apiVersion: external-secrets.io/v1beta1\nkind: SecretStore\nmetadata: {name: vault, namespace: web}\n---\napiVersion: external-secrets.io/v1beta1\nkind: ClusterSecretStore\nmetadata: {name: global}\n"},
			{"es", "web", "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata: {name: a}\nspec: {secretStoreRef: {name: vault}}\n---\napiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata: {name: b}\nspec:\n  data:\n  - secretKey: k\n    sourceRef: {storeRef: {name: global, kind: ClusterSecretStore}}\n"}},
			[]string{"es → stores: ClusterSecretStore global×1", "es → stores: SecretStore web/vault×1"}},
		{"namespace: explicit, the destination, cluster-scoped none", []a{
			{"ns", "", "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: dest}\n"},
			{"explicit", "", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: web}\n"},
			{"dest", "dest", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r, namespace: web}\n"}},
			[]string{"dest → ns: Namespace dest×1", "explicit → ns: Namespace web×1"}},
		{"webhook: Fail intercepts, Ignore and selectors do not", []a{
			{"hooks", "", `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: v}
webhooks:
- name: fail.example.com
  failurePolicy: Fail
  clientConfig: {service: {name: s, namespace: hooks}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
- name: ignore.example.com
  failurePolicy: Ignore
  clientConfig: {service: {name: s, namespace: hooks}}
  rules: [{apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"]}]
- name: labelled.example.com
  clientConfig: {service: {name: s, namespace: hooks}}
  objectSelector: {matchLabels: {inject: "yes"}}
  rules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
- name: ns.example.com
  clientConfig: {service: {name: s, namespace: hooks}}
  namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets], scope: Namespaced}]
- name: delete-only.example.com
  clientConfig: {service: {name: s, namespace: hooks}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [services]}]
- name: url.example.com
  clientConfig: {url: "https://hooks.example.com/"}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [services]}]
`},
			{"c", "app", `apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: plain}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: injected, labels: {inject: "yes"}}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: kube-system}
---
apiVersion: v1
kind: Secret
metadata: {name: t}
---
apiVersion: v1
kind: Service
metadata: {name: svc}
`}},
			[]string{"c → hooks: validating webhook fail.example.com (service hooks/s)×1",
				"c → hooks: validating webhook labelled.example.com (service hooks/s)×1",
				"c → hooks: validating webhook ns.example.com (service hooks/s)×1"}},
		{"webhook: v1beta1 defaults to Ignore", []a{
			{"hooks", "", "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingWebhookConfiguration\nmetadata: {name: m}\nwebhooks:\n- name: m.example.com\n  clientConfig: {service: {name: s, namespace: hooks}}\n  rules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}]\n"},
			{"c", "", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x}\n"}}, nil},
		{"priority and runtime classes in pod templates", []a{
			{"classes", "", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\n"},
			{"w", "", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {priorityClassName: high, containers: []}}}\n---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {jobTemplate: {spec: {template: {spec: {runtimeClassName: gvisor, priorityClassName: system-node-critical}}}}}\n"}},
			[]string{"w → classes: PriorityClass high×1", "w → classes: RuntimeClass gvisor×1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var apps []App
			for _, x := range c.apps {
				apps = append(apps, app(t, x.name, x.ns, x.yml))
			}
			r := Infer(apps)
			got := flat(r)
			for _, k := range r.Conflicts {
				got = append(got, "conflict: "+k.App+": "+k.What+": "+strings.Join(k.Providers, ", "))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// An app whose CreateNamespace=true makes its destination namespace does
// not need the app that also deploys that Namespace.
func TestCreatesNamespace(t *testing.T) {
	ns := app(t, "ns", "", "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n")
	c := app(t, "c", "web", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	if r := Infer([]App{ns, c}); len(r.Edges) != 1 {
		t.Fatalf("without CreateNamespace: %v", flat(r))
	}
	c.CreatesNamespace = true
	if r := Infer([]App{ns, c}); len(r.Edges) != 0 {
		t.Errorf("with CreateNamespace: %v", flat(r))
	}
}

// Every rule has a name and both functions; names are unique (docs and
// tests refer to them).
func TestRuleTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if r.Name == "" || r.Provides == nil || r.Needs == nil || seen[r.Name] {
			t.Errorf("rule %q: incomplete or duplicate", r.Name)
		}
		seen[r.Name] = true
	}
}

// Objects a successful sync never applies need and provide nothing.
func TestSynced(t *testing.T) {
	for _, c := range []struct {
		ann  string
		want bool
	}{
		{"", true},
		{"argocd.argoproj.io/hook: Skip", false},
		{"argocd.argoproj.io/hook: 'PreSync, Skip'", true},
		{"argocd.argoproj.io/hook: SyncFail", false},
		{"argocd.argoproj.io/hook: PostSync", true},
		{"helm.sh/hook: test", false},
		{"helm.sh/hook: test-success", false},
		{"helm.sh/hook: crd-install", true},
		{"helm.sh/hook: 'pre-install,pre-upgrade'", true},
		{"{helm.sh/hook: test, argocd.argoproj.io/hook: Sync}", true},
	} {
		ann := c.ann
		if ann != "" && !strings.HasPrefix(ann, "{") {
			ann = "{" + ann + "}"
		}
		yml := "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c, namespace: x"
		if ann != "" {
			yml += ", annotations: " + ann
		}
		yml += "}\n"
		objs, errs := Parse("x.yaml", []byte(yml))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if got := objs[0].Synced(); got != c.want {
			t.Errorf("%s: synced %v", c.ann, got)
		}
		r := Infer([]App{app(t, "cm", "", crdCert), {Name: "c", Objects: objs}})
		if (len(r.Edges) == 1) != c.want {
			t.Errorf("%s: edges %v", c.ann, flat(r))
		}
	}
}

// A selector that does not parse selects nothing: no edge is guessed.
func TestBadSelector(t *testing.T) {
	hooks := app(t, "hooks", "", `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: v}
webhooks:
- name: v.example.com
  clientConfig: {service: {name: s, namespace: hooks}}
  objectSelector: {matchExpressions: [{key: a, operator: Sometimes}]}
  rules: [{apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"]}]
`)
	c := app(t, "c", "x", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	if r := Infer([]App{hooks, c}); len(r.Edges) != 0 {
		t.Errorf("edges %v", flat(r))
	}
}

// A webhook is served by the app that deploys its Service, when that is
// not the app of the configuration.
func TestWebhookService(t *testing.T) {
	cfg := app(t, "hooks-config", "", `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: v}
webhooks:
- name: v.example.com
  clientConfig: {service: {name: hooks, namespace: hooks}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
`)
	svc := app(t, "hooks-server", "hooks", "apiVersion: v1\nkind: Service\nmetadata: {name: hooks}\nspec: {ports: [{port: 443}]}\n")
	c := app(t, "c", "x", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	got := flat(Infer([]App{cfg, svc, c}))
	if len(got) != 1 || got[0] != "c → hooks-server: validating webhook v.example.com (service hooks/hooks)×1" {
		t.Errorf("edges %v", got)
	}
	got = flat(Infer([]App{cfg, c}))
	if len(got) != 1 || got[0] != "c → hooks-config: validating webhook v.example.com (service hooks/hooks)×1" {
		t.Errorf("without the Service: %v", got)
	}
}
