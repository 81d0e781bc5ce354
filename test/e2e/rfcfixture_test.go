//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// ---- the stand-in of the RFC's 41-app reference platform (issue 24)
//
// The graph is examples/reference-platform.yaml's (41 apps, 11 stacks, its
// dependsOn); each app deploys a stand-in of what the real project deploys
// (pkg/importer/testdata/rfc-manifests), such that an edge of the graph is a
// mechanism wherever the real projects have one:
//
//   - an operator ships its CRDs and a controller (`e2eapp controller`) that
//     becomes ready after its delay, then sets Ready=True on the custom
//     resources of its kinds; an instance is such a custom resource, judged
//     by the spec's health check for its kind (Ready=True: Healthy). Synced
//     before its CRD the sync fails; without its controller it is never
//     Healthy.
//   - storage: ceph-storageclasses ships the StorageClass ceph-block (Retain),
//     whose provisioner is ceph-operator's controller (-provision: it makes a
//     volume for each claim the kube-controller-manager hands it, as Ceph's
//     CSI provisioner would); the stateful apps' PVCs name it and stay
//     Pending (Progressing) before. The volumes are no app's resources, so a
//     teardown leaves them Released (SC-4).
//   - admission: kyverno ships a failurePolicy Fail validating webhook served
//     by its own pod (TLS from a CA made per run); it intercepts every object
//     labelled rfcAdmitted (kyverno-policies and the stacks that depend on
//     security): refused while kyverno is not ready.
//   - a server that needs another app's object waits for it (-needs: keycloak,
//     harbor, backstage, temporal wait for their postgresql; harbor for its
//     RedisCluster) or for its URL (-needs-url: external-secrets for vault).
//
// Readiness delays (rfcApps) are fixed: operators slower than servers,
// configuration apps none. What has no mechanism here: the stack-level
// edges that no object shows (storage-operators and networking after
// foundation, and the like) and external-dns, falco, tempo (configuration).

// rfcCRD is a stand-in CRD: its kind in its real API group.
type rfcCRD struct {
	group, kind, plural string
	cluster             bool
}

func (c rfcCRD) ref() string { return c.group + "/v1/" + c.plural }

var rfcCRDs = map[string]rfcCRD{
	"ipaddresspools":      {"metallb.io", "IPAddressPool", "ipaddresspools", false},
	"clusterissuers":      {"cert-manager.io", "ClusterIssuer", "clusterissuers", true},
	"sealedsecrets":       {"bitnami.com", "SealedSecret", "sealedsecrets", false},
	"cephclusters":        {"ceph.rook.io", "CephCluster", "cephclusters", false},
	"cephblockpools":      {"ceph.rook.io", "CephBlockPool", "cephblockpools", false},
	"postgresqls":         {"acid.zalan.do", "postgresql", "postgresqls", false},
	"redisclusters":       {"redis.redis.opstreelabs.in", "RedisCluster", "redisclusters", false},
	"prometheuses":        {"monitoring.coreos.com", "Prometheus", "prometheuses", false},
	"servicemonitors":     {"monitoring.coreos.com", "ServiceMonitor", "servicemonitors", false},
	"kafkas":              {"kafka.strimzi.io", "Kafka", "kafkas", false},
	"clustersecretstores": {"external-secrets.io", "ClusterSecretStore", "clustersecretstores", true},
	"externalsecrets":     {"external-secrets.io", "ExternalSecret", "externalsecrets", false},
	"clusterpolicies":     {"kyverno.io", "ClusterPolicy", "clusterpolicies", true},
	"pipelines":           {"tekton.dev", "Pipeline", "pipelines", false},
	"kubevirts":           {"kubevirt.io", "KubeVirt", "kubevirts", false},
	"rollouts":            {"argoproj.io", "Rollout", "rollouts", false},
}

// rfcApp: what one app of the platform deploys.
type rfcApp struct {
	pod      time.Duration // readiness delay of its pod; -1: no pod
	crds     []string      // CRDs it ships (keys of rfcCRDs)
	kinds    []string      // kinds its controller marks Ready
	gate     string        // plural=G/V/P/NS/NAME
	needs    []string      // G/V/P/NS/NAME objects Ready before its pod is
	needsURL []string
	crs      [][2]string // custom resources: kind key, name
	pvc      bool        // a PVC of StorageClass ceph-block
	port     int         // a Service named after the app on this port
	webhook  bool
	config   bool // a ConfigMap (what an app without a mechanism deploys)
	// provision: its controller is ceph-block's provisioner (rfcProvisioner)
	provision bool
}

const noPod = -1

// rfcApps: the stand-in of each app. Delays: operators 3–5 s, servers
// 1–3 s, configuration none.
var rfcApps = map[string]rfcApp{
	// foundation
	"metallb":              {pod: 3 * time.Second, crds: []string{"ipaddresspools"}, kinds: []string{"ipaddresspools"}},
	"metallb-config":       {pod: noPod, crs: [][2]string{{"ipaddresspools", "default-pool"}}},
	"cert-manager":         {pod: 3 * time.Second, crds: []string{"clusterissuers"}, kinds: []string{"clusterissuers"}},
	"cert-manager-issuers": {pod: noPod, crs: [][2]string{{"clusterissuers", "selfsigned"}}},
	"sealed-secrets":       {pod: 2 * time.Second, crds: []string{"sealedsecrets"}, kinds: []string{"sealedsecrets"}},
	// storage-operators
	"ceph-operator": {pod: 5 * time.Second, crds: []string{"cephclusters", "cephblockpools"}, kinds: []string{"cephclusters", "cephblockpools"},
		gate: "cephblockpools=ceph.rook.io/v1/cephclusters/rook-ceph/rook-ceph", provision: true},
	"postgres-operator": {pod: 4 * time.Second, crds: []string{"postgresqls"}, kinds: []string{"postgresqls"}},
	"redis-operator":    {pod: 4 * time.Second, crds: []string{"redisclusters"}, kinds: []string{"redisclusters"}},
	// storage
	"ceph-cluster":        {pod: noPod, crs: [][2]string{{"cephclusters", "rook-ceph"}}},
	"ceph-storageclasses": {pod: noPod, crs: [][2]string{{"cephblockpools", "replicapool"}}},
	// networking
	"ingress-nginx": {pod: 2 * time.Second},
	"external-dns":  {pod: noPod, config: true},
	// platform-data
	"keycloak-postgres":  {pod: noPod, crs: [][2]string{{"postgresqls", "keycloak-db"}}, pvc: true},
	"harbor-postgres":    {pod: noPod, crs: [][2]string{{"postgresqls", "harbor-db"}}, pvc: true},
	"backstage-postgres": {pod: noPod, crs: [][2]string{{"postgresqls", "backstage-db"}}, pvc: true},
	"temporal-postgres":  {pod: noPod, crs: [][2]string{{"postgresqls", "temporal-db"}}, pvc: true},
	"redis-cluster":      {pod: noPod, crs: [][2]string{{"redisclusters", "redis-cluster"}}},
	// security
	"vault": {pod: 3 * time.Second, pvc: true, port: 8200},
	"external-secrets": {pod: 3 * time.Second, crds: []string{"clustersecretstores", "externalsecrets"}, kinds: []string{"clustersecretstores", "externalsecrets"},
		gate: "externalsecrets=external-secrets.io/v1/clustersecretstores//vault-backend", needsURL: []string{"http://vault.vault.svc:8200/ready"}},
	"external-secrets-stores": {pod: noPod, crs: [][2]string{{"clustersecretstores", "vault-backend"}}},
	"keycloak": {pod: 2 * time.Second, needs: []string{"acid.zalan.do/v1/postgresqls/keycloak/keycloak-db"},
		crs: [][2]string{{"externalsecrets", "keycloak-admin"}}},
	"kyverno":          {pod: 5 * time.Second, crds: []string{"clusterpolicies"}, kinds: []string{"clusterpolicies"}, webhook: true, port: 443},
	"kyverno-policies": {pod: noPod, crs: [][2]string{{"clusterpolicies", "require-labels"}}},
	"falco":            {pod: noPod, config: true},
	// monitoring
	"prometheus-operator-crds": {pod: noPod, crds: []string{"prometheuses", "servicemonitors"}},
	"prometheus": {pod: 3 * time.Second, kinds: []string{"prometheuses", "servicemonitors"},
		crs: [][2]string{{"prometheuses", "k8s"}}},
	"grafana": {pod: noPod, crs: [][2]string{{"servicemonitors", "grafana"}}},
	"loki":    {pod: noPod, config: true, pvc: true},
	"tempo":   {pod: noPod, config: true},
	// data-streaming
	"strimzi-operator": {pod: 4 * time.Second, crds: []string{"kafkas"}, kinds: []string{"kafkas"}},
	"kafka-cluster":    {pod: noPod, crs: [][2]string{{"kafkas", "kafka"}}, pvc: true},
	// developer-platform
	"harbor": {pod: 2 * time.Second, needs: []string{"acid.zalan.do/v1/postgresqls/harbor/harbor-db",
		"redis.redis.opstreelabs.in/v1/redisclusters/redis/redis-cluster"}},
	"backstage":         {pod: 1 * time.Second, needs: []string{"acid.zalan.do/v1/postgresqls/backstage/backstage-db"}},
	"tekton-pipelines":  {pod: 3 * time.Second, crds: []string{"pipelines"}, kinds: []string{"pipelines"}},
	"tekton-triggers":   {pod: noPod, crs: [][2]string{{"pipelines", "triggers-build"}}},
	"kubevirt-operator": {pod: 4 * time.Second, crds: []string{"kubevirts"}, kinds: []string{"kubevirts"}},
	"kubevirt":          {pod: noPod, crs: [][2]string{{"kubevirts", "kubevirt"}}},
	// development-workloads
	"argo-rollouts": {pod: 3 * time.Second, crds: []string{"rollouts"}, kinds: []string{"rollouts"}},
	"kargo":         {pod: noPod, crs: [][2]string{{"rollouts", "kargo-analysis"}}},
	// application-infrastructure
	"temporal":    {pod: 2 * time.Second, needs: []string{"acid.zalan.do/v1/postgresqls/temporal/temporal-db"}, port: 8080},
	"temporal-ui": {pod: 1 * time.Second, needsURL: []string{"http://temporal.temporal.svc:8080/ready"}},
}

// rfcAdmittedStacks: the stacks whose objects kyverno's webhook intercepts
// (they depend on security, kyverno's stack), and kyverno-policies.
var rfcAdmittedStacks = map[string]bool{"developer-platform": true, "application-infrastructure": true}

const (
	rfcAdmitted = "admission.e2e.deployctl.dev/enforce"
	rfcPartOf   = "e2e-rfc"
	// rfcProvisioner: ceph-block's provisioner, as Rook names its RBD one.
	rfcProvisioner = "rook-ceph.rbd.csi.ceph.com"
	rfcWebhook     = "rfc-kyverno"
	rfcSpecFile    = "rfc.yaml"
	rfcRoot        = "rfc-root"
	rfcGitPrefix   = "rfc-aoa"
)

// rfcRef: the reference spec's view of the graph and of where each app goes.
type rfcRef struct {
	doc    map[string]any
	stacks []rfcStack
}

type rfcStack struct {
	name      string
	dependsOn []string
	apps      []rfcRefApp
}

type rfcRefApp struct {
	name, path, ns, stack string
	dependsOn             []string
}

func loadRFCRef(file string) (*rfcRef, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r := &rfcRef{}
	if err := yaml.Unmarshal(b, &r.doc); err != nil {
		return nil, err
	}
	var typed platformDoc
	if err := yaml.Unmarshal(b, &typed); err != nil {
		return nil, err
	}
	for _, s := range typed.Spec.Stacks {
		st := rfcStack{name: s.Name, dependsOn: s.DependsOn}
		for _, a := range s.Apps {
			st.apps = append(st.apps, rfcRefApp{name: a.Name, path: a.Source.Path, ns: a.Destination.Namespace, stack: s.Name, dependsOn: a.DependsOn})
			if _, ok := rfcApps[a.Name]; !ok {
				return nil, fmt.Errorf("%s: app %s has no stand-in in rfcApps", file, a.Name)
			}
		}
		r.stacks = append(r.stacks, st)
	}
	return r, nil
}

func (r *rfcRef) apps() []rfcRefApp {
	var out []rfcRefApp
	for _, s := range r.stacks {
		out = append(out, s.apps...)
	}
	return out
}

// spec is the reference spec for this cluster: its Git repository, step
// image, Secrets and short timeouts; the health checks of the stand-in
// kinds; no events or bootstrap (not what this measures). drop, if set
// ("consumer->dependency"), removes that dependsOn entry.
func (r *rfcRef) spec(stepMode, drop string) ([]byte, error) {
	var doc map[string]any
	raw, _ := yaml.Marshal(r.doc)
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	doc["metadata"] = map[string]any{"name": "rfc"}
	spec := doc["spec"].(map[string]any)
	delete(spec, "events")
	delete(spec, "bootstrap")
	argocd := spec["argocd"].(map[string]any)
	argocd["caSecret"] = map[string]any{"name": "argocd-ca", "key": "ca.crt"}
	wf := spec["workflow"].(map[string]any)
	wf["image"], wf["imagePullPolicy"] = "local.test/deploystep:dev", "Never"
	if stepMode != "" {
		wf["stepMode"] = stepMode
	}
	spec["defaults"] = map[string]any{
		"source":      map[string]any{"repoURL": "git://127.0.0.1:9418/platform.git", "targetRevision": "main"},
		"syncOptions": []any{"CreateNamespace=true"},
	}
	rfcStepSettings(spec["defaults"].(map[string]any))
	from, to, _ := strings.Cut(drop, "->")
	dropped := false
	for _, s := range spec["stacks"].([]any) {
		for _, a := range s.(map[string]any)["apps"].([]any) {
			app := a.(map[string]any)
			delete(app, "timeouts")
			if app["name"] == from {
				var keep []any
				for _, d := range app["dependsOn"].([]any) {
					if d == to {
						dropped = true
						continue
					}
					keep = append(keep, d)
				}
				if len(keep) == 0 {
					delete(app, "dependsOn")
				} else {
					app["dependsOn"] = keep
				}
			}
		}
	}
	if drop != "" && !dropped {
		return nil, fmt.Errorf("no dependsOn entry %s to drop", drop)
	}
	spec["healthCustomizations"] = rfcHealthCustomizations()
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte("# Generated by test/e2e/rfcfixture_test.go from examples/reference-platform.yaml.\n"), out...), nil
}

// rfcStepSettings: the step timeouts and retries of the stand-in's specs
// (short: the stand-in's delays are seconds).
func rfcStepSettings(defaults map[string]any) {
	defaults["timeouts"] = map[string]any{"sync": "2m", "health": "3m"}
	defaults["retry"] = map[string]any{"limit": 3, "backoff": "2s", "factor": 2, "maxBackoff": "20s"}
}

// rfcHealthCustomizations: a health check for each stand-in kind.
func rfcHealthCustomizations() []any {
	var hc []any
	for _, k := range keys(rfcCRDs) {
		c := rfcCRDs[k]
		hc = append(hc, map[string]any{"group": c.group, "kind": c.kind, "lua": rfcHealthLua})
	}
	return hc
}

// rfcHealthLua: every stand-in kind is Healthy once its controller set
// Ready=True (the reference spec's Kafka check, for each kind).
const rfcHealthLua = `hs = {status = "Progressing", message = "waiting for the controller to mark it Ready"}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" and c.status == "True" then
      hs.status = "Healthy"
      hs.message = c.message or "Ready"
    end
  end
end
return hs
`

func (r *rfcRef) healthKeys() map[string]string {
	out := map[string]string{}
	for _, c := range rfcCRDs {
		out["resource.customizations.health."+c.group+"_"+c.kind] = rfcHealthLua
	}
	return out
}

// ---- the manifests

type webhookTLS struct{ ca, cert, key []byte }

// newWebhookTLS: a CA and a serving certificate for kyverno's Service,
// made per run (nothing secret is committed).
func newWebhookTLS() (*webhookTLS, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e rfc webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kyverno.kyverno.svc"},
		DNSNames: []string{"kyverno.kyverno.svc"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &webhookTLS{
		ca:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}),
	}, nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// manifests: the YAML of one app's stand-in.
func (a rfcRefApp) manifests(tls *webhookTLS, pvDir string) string {
	sa := rfcApps[a.name]
	admitted := rfcAdmittedStacks[a.stack] || a.name == "kyverno-policies"
	labels := fmt.Sprintf("{app.kubernetes.io/name: %s, app.kubernetes.io/part-of: %s", a.name, rfcPartOf)
	if admitted {
		labels += ", " + rfcAdmitted + `: "true"`
	}
	labels += "}"
	var docs []string
	add := func(f string, args ...any) { docs = append(docs, fmt.Sprintf(f, args...)) }
	for _, k := range sa.crds {
		c := rfcCRDs[k]
		scope := "Namespaced"
		if c.cluster {
			scope = "Cluster"
		}
		add(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s.%s
  labels: %s
spec:
  group: %s
  names: {kind: %s, listKind: %sList, plural: %s, singular: %s}
  scope: %s
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, c.plural, c.group, labels, c.group, c.kind, c.kind, c.plural, strings.ToLower(c.kind), scope)
	}
	for _, cr := range sa.crs {
		c := rfcCRDs[cr[0]]
		ns := ""
		if !c.cluster {
			ns = ", namespace: " + a.ns
		}
		add("apiVersion: %s/v1\nkind: %s\nmetadata: {name: %s%s, labels: %s}\nspec: {standIn: %s}\n", c.group, c.kind, cr[1], ns, labels, a.name)
	}
	if sa.config {
		add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-config, namespace: %s, labels: %s}\ndata: {app: %s}\n", a.name, a.ns, labels, a.name)
	}
	if sa.pvc {
		add(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %s-data, namespace: %s, labels: %s}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ceph-block
  resources: {requests: {storage: 1Gi}}
`, a.name, a.ns, labels)
	}
	if a.name == "ceph-storageclasses" {
		add(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ceph-block, labels: %s}
provisioner: %s
volumeBindingMode: Immediate
reclaimPolicy: Retain
`, labels, rfcProvisioner)
	}
	if sa.pod == noPod {
		return strings.Join(docs, "---\n")
	}
	// The pod: a ServiceAccount that may read and mark the stand-in kinds.
	groups := map[string]bool{}
	for _, c := range rfcCRDs {
		groups[c.group] = true
	}
	add("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: %s, namespace: %s, labels: %s}\n", a.name, a.ns, labels)
	add(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: rfc-%s, labels: %s}
rules:
- apiGroups: ["%s"]
  resources: ["*"]
  verbs: [get, list, watch, patch]%s
`, a.name, labels, strings.Join(keys(groups), `", "`), provisionRules(sa.provision))
	add(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: rfc-%s, labels: %s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rfc-%s}
subjects:
- {kind: ServiceAccount, name: %s, namespace: %s}
`, a.name, labels, a.name, a.name, a.ns)
	args := []string{"controller", "-ready-after=" + sa.pod.String()}
	var kinds []string
	for _, k := range sa.kinds {
		kinds = append(kinds, rfcCRDs[k].ref())
	}
	if len(kinds) > 0 {
		args = append(args, "-kinds="+strings.Join(kinds, ","))
	}
	if sa.gate != "" {
		args = append(args, "-gate="+sa.gate)
	}
	if len(sa.needs) > 0 {
		args = append(args, "-needs="+strings.Join(sa.needs, ","))
	}
	if len(sa.needsURL) > 0 {
		args = append(args, "-needs-url="+strings.Join(sa.needsURL, ","))
	}
	mounts, volumes := "", ""
	if sa.provision {
		args = append(args, "-provision="+rfcProvisioner+"="+pvDir, "-labels=app.kubernetes.io/part-of="+rfcPartOf)
	}
	if sa.webhook {
		args = append(args, "-webhook=/tls")
		mounts = "\n        volumeMounts: [{name: tls, mountPath: /tls, readOnly: true}]"
		volumes = "\n      volumes: [{name: tls, secret: {secretName: kyverno-tls}}]"
	}
	add(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: %s, labels: %s}
spec:
  replicas: 1
  selector:
    matchLabels: {app.kubernetes.io/name: %s}
  template:
    metadata:
      labels: %s
    spec:
      serviceAccountName: %s
      terminationGracePeriodSeconds: 2
      enableServiceLinks: false
      securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
      containers:
      - name: app
        image: local.test/e2eapp:dev
        imagePullPolicy: Never
        args: ["%s"]
        env:
        - {name: APP_NAME, value: %s}
        - {name: NEVER_READY, value: "false"}
        ports:
        - {name: http, containerPort: 8080}
        readinessProbe:
          httpGet: {path: /ready, port: http}
          periodSeconds: 1
          failureThreshold: 1
        resources:
          requests: {cpu: 5m, memory: 16Mi}
          limits: {memory: 32Mi}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}%s%s
`, a.name, a.ns, labels, a.name, labels, a.name, strings.Join(args, `", "`), a.name, mounts, volumes)
	if sa.port != 0 {
		target := "http"
		if sa.webhook {
			target = "8443"
		}
		add(`apiVersion: v1
kind: Service
metadata: {name: %s, namespace: %s, labels: %s}
spec:
  selector: {app.kubernetes.io/name: %s}
  ports:
  - {port: %d, targetPort: %s}
`, a.name, a.ns, labels, a.name, sa.port, target)
	}
	if sa.webhook {
		add(`apiVersion: v1
kind: Secret
metadata: {name: kyverno-tls, namespace: %s, labels: %s}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
`, a.ns, labels, b64(tls.cert), b64(tls.key))
		// Fail: nothing it intercepts is admitted while its pod does not
		// serve. Objects being deleted are left alone (a finalizer's
		// removal is an UPDATE), so a teardown in any order finishes.
		add(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %s, labels: %s}
webhooks:
- name: validate.kyverno.e2e.deployctl.dev
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 5
  clientConfig:
    caBundle: %s
    service: {name: kyverno, namespace: %s, path: /validate, port: 443}
  objectSelector:
    matchLabels: {%s: "true"}
  matchConditions:
  - name: not-being-deleted
    expression: "!has(object.metadata.deletionTimestamp)"
  rules:
  - operations: [CREATE, UPDATE]
    apiGroups: ["*"]
    apiVersions: ["*"]
    resources: ["*"]
    scope: "*"
`, rfcWebhook, labels, b64(tls.ca), a.ns, rfcAdmitted)
	}
	return strings.Join(docs, "---\n")
}

// rfcWaves: the RFC app-of-apps' waves (pkg/importer/testdata/rfc): per
// stack its wave under the root, per app its wave in its stack.
var rfcStackWaves = map[string]int{"foundation": -30, "storage-operators": -20, "networking": -20, "storage": -10, "monitoring": 0,
	"platform-data": 10, "data-streaming": 10, "security": 20, "development-workloads": 30, "developer-platform": 40, "application-infrastructure": 50}

var rfcAppWaves = map[string]int{"metallb": -10, "metallb-config": 0, "cert-manager": -10, "cert-manager-issuers": 0,
	"ceph-cluster": 0, "ceph-storageclasses": 10, "prometheus-operator-crds": -20, "prometheus": -10, "grafana": 0, "loki": 0, "tempo": 0,
	"keycloak-postgres": 0, "harbor-postgres": 0, "backstage-postgres": 0, "temporal-postgres": 0, "redis-cluster": 5,
	"strimzi-operator": -10, "kafka-cluster": 0, "vault": -10, "external-secrets": -5, "external-secrets-stores": 0, "keycloak": 10,
	"kyverno": -10, "kyverno-policies": 0, "argo-rollouts": -10, "kargo": 0, "harbor": 0, "backstage": 0, "tekton-pipelines": -10,
	"tekton-triggers": 0, "kubevirt-operator": -10, "kubevirt": 0, "temporal": 0, "temporal-ui": 10}

// application: an Application of the app-of-apps.
func rfcApplication(name, path, ns string, wave *int, leaf bool) string {
	ann := ""
	if wave != nil {
		ann = fmt.Sprintf("\n  annotations: {argocd.argoproj.io/sync-wave: \"%d\"}", *wave)
	}
	policy := "    automated: {prune: true, selfHeal: true}\n"
	if leaf {
		// What owners of an app-of-apps set so that a failed sync (a CR
		// before its CRD) is tried again: Argo CD's automated sync does
		// not retry a failed revision by itself.
		policy += "    syncOptions: [CreateNamespace=true]\n    retry: {limit: 10, backoff: {duration: 5s, factor: 2, maxDuration: 1m}}\n"
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: argocd
  labels: {e2e.deployctl.dev/fixture: rfc-aoa}%s
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source: {repoURL: "git://127.0.0.1:9418/platform.git", targetRevision: main, path: %s}
  destination: {server: "https://kubernetes.default.svc", namespace: %s}
  syncPolicy:
%s`, name, ann, path, ns, policy)
}

// write lays the stand-in out in the Git work tree (the apps at the
// reference's source paths, the app-of-apps under rfc-aoa/) and in
// manifestsDir/<app>/ (plan --manifests).
func (r *rfcRef) write(gitWork, manifestsDir, pvDir string, tls *webhookTLS) error {
	files := map[string]string{}
	for _, a := range r.apps() {
		m := a.manifests(tls, pvDir)
		files[filepath.Join(gitWork, a.path, "manifests.yaml")] = m
		files[filepath.Join(manifestsDir, a.name, "manifests.yaml")] = m
		w := rfcAppWaves[a.name]
		files[filepath.Join(gitWork, rfcGitPrefix, "components", a.stack, a.name+".yaml")] = rfcApplication(a.name, a.path, a.ns, &w, true)
	}
	for _, s := range r.stacks {
		w := rfcStackWaves[s.name]
		files[filepath.Join(gitWork, rfcGitPrefix, "stacks", s.name+".yaml")] = rfcApplication(s.name, rfcGitPrefix+"/components/"+s.name, argocdNS, &w, false)
	}
	files[filepath.Join(gitWork, rfcGitPrefix, "root.yaml")] = rfcApplication(rfcRoot, rfcGitPrefix+"/stacks", argocdNS, nil, false)
	for f, c := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// rfcPlatform: the graph as the harness reads it (stack edges expanded),
// with the pods' readiness delays.
func (r *rfcRef) platform(specFile string) (*platform, error) {
	p, err := loadPlatform(specFile, os.TempDir())
	if err != nil {
		return nil, err
	}
	for _, a := range p.Apps {
		if d := rfcApps[a].pod; d > 0 {
			p.ReadyAfter[a] = d
		}
	}
	return p, nil
}

// stackOf, namespaces: for the clean-up.
func (r *rfcRef) namespaces() []string {
	seen := map[string]bool{"kube-system": true}
	var out []string
	for _, a := range r.apps() {
		if !seen[a.ns] {
			seen[a.ns] = true
			out = append(out, a.ns)
		}
	}
	sort.Strings(out)
	return out
}

func (r *rfcRef) crdNames() []string {
	var out []string
	for _, c := range rfcCRDs {
		out = append(out, c.plural+"."+c.group)
	}
	sort.Strings(out)
	return out
}

// rfcExplainEdges runs plan --explain-edges --manifests on the spec
// (specs["pod"]: must exit 0, the stand-in shows no dependency the spec
// lacks) and on the spec without rfcDroppedEdge (specs["dropped"]: must
// exit 3 naming it). It returns both outputs.
func rfcExplainEdges(deployctl string, specs map[string]string, manifests string) (string, error) {
	out, err := exec.Command(deployctl, "plan", specs["pod"], "--explain-edges", "--manifests", manifests).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("the stand-in shows a dependency the reference spec lacks (%v):\n%s", err, lastLines(string(out), 20))
	}
	out2, err := exec.Command(deployctl, "plan", specs["dropped"], "--explain-edges", "--manifests", manifests).CombinedOutput()
	all := string(out) + "\n--- without " + rfcDroppedEdge + ":\n" + string(out2)
	from, to, _ := strings.Cut(rfcDroppedEdge, "->")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		return all, fmt.Errorf("without %s: plan --explain-edges ended %v, want exit 3:\n%s", rfcDroppedEdge, err, lastLines(string(out2), 20))
	}
	if !strings.Contains(string(out2), "missing dependency "+from+" → "+to) {
		return all, fmt.Errorf("without %s: plan did not name it:\n%s", rfcDroppedEdge, lastLines(string(out2), 20))
	}
	return all, nil
}

// rfcWriteSpecs writes the three specs of the stand-in into dir.
func rfcWriteSpecs(ref *rfcRef, dir string) (map[string]string, error) {
	specs := map[string]string{}
	for _, name := range []string{"pod", "plugin", "dropped"} {
		mode, drop := name, ""
		if name == "dropped" {
			mode, drop = "pod", rfcDroppedEdge
		}
		b, err := ref.spec(mode, drop)
		if err != nil {
			return nil, err
		}
		specs[name] = filepath.Join(dir, "rfc-"+name+".yaml")
		if err := os.WriteFile(specs[name], b, 0o600); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// TestRFCEdges needs no cluster: the stand-in's edges are real (a dropped
// one is caught from what the apps deploy), its specs pass lint, and the
// stand-in covers the reference's 41 apps.
func TestRFCEdges(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Clean(filepath.Join(wd, "..", ".."))
	ref, err := loadRFCRef(filepath.Join(repo, "examples", "reference-platform.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ref.apps()); n != 41 || len(ref.stacks) != 11 || len(rfcApps) != 41 {
		t.Fatalf("reference: %d apps in %d stacks, %d stand-ins; want 41, 11, 41", n, len(ref.stacks), len(rfcApps))
	}
	dir := t.TempDir()
	if d := os.Getenv("E2E_RFC_KEEP"); d != "" { // look at what it wrote
		dir = d
	}
	tls, err := newWebhookTLS()
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.write(filepath.Join(dir, "git"), filepath.Join(dir, "manifests"), "/nonexistent", tls); err != nil {
		t.Fatal(err)
	}
	specs, err := rfcWriteSpecs(ref, dir)
	if err != nil {
		t.Fatal(err)
	}
	dc := filepath.Join(dir, "deployctl")
	if out, err := exec.Command("go", "build", "-o", dc, filepath.Join(repo, "cmd", "deployctl")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, f := range []string{specs["pod"], specs["plugin"]} {
		if out, err := exec.Command(dc, "lint", f).CombinedOutput(); err != nil {
			t.Fatalf("lint %s: %v\n%s", f, err, out)
		}
	}
	if out, err := rfcExplainEdges(dc, specs, filepath.Join(dir, "manifests")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	imp, err := rfcImportProof(dc, filepath.Join(dir, "git", rfcGitPrefix), filepath.Join(dir, "manifests"), specs["pod"], dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(imp)
}

// ---- the import path (issue 24, item 2): deployctl import of the
// stand-in's app-of-apps, held against the hand-written graph

// closure: every ordered pair "a<b" (b waits for a, directly or not) of p.
func (p *platform) closure() map[string]bool {
	out := map[string]bool{}
	for _, b := range p.Apps {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(x string) {
			for _, a := range p.Deps[x] {
				if !seen[a] {
					seen[a] = true
					walk(a)
				}
			}
		}
		walk(b)
		for a := range seen {
			out[a+"<"+b] = true
		}
	}
	return out
}

// orderDiff: the pairs one graph orders and the other does not.
func orderDiff(want, got *platform) (missing, extra []string) {
	w, g := want.closure(), got.closure()
	for k := range w {
		if !g[k] {
			missing = append(missing, k)
		}
	}
	for k := range g {
		if !w[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// impliedEdges: how many of want's edges (b depends on a, stacks
// expanded) got orders too, directly or through others, of how many.
func impliedEdges(want, got *platform) (implied, edges int) {
	g := got.closure()
	for _, b := range want.Apps {
		for _, a := range want.Deps[b] {
			edges++
			if g[a+"<"+b] {
				implied++
			}
		}
	}
	return implied, edges
}

// rfcImportProof: `deployctl import` of the stand-in's app-of-apps
// (aoaDir: root → 11 stacks → 41 apps, the RFC's waves, what Argo CD reads)
// with --manifests, written to dir/imported.yaml, and again with
// --prune-unexplained. Each graph's transitive order is compared with the
// hand-written spec's (stacks expanded): the import with its waves must
// order every pair the hand-written graph orders (it may order more: a
// wave waits for the whole wave before it). The pruned import is reported,
// not held: it keeps only what a resource shows, and the hand-written
// graph has stack edges that no object shows (test/e2e/README.md).
func rfcImportProof(deployctl, aoaDir, manifests, handSpec, dir string) (string, error) {
	hand, err := loadPlatform(handSpec, os.TempDir())
	if err != nil {
		return "", err
	}
	var parts []string
	for _, v := range []struct {
		file  string
		extra []string
	}{{"imported.yaml", nil}, {"imported-pruned.yaml", []string{"--prune-unexplained"}}} {
		out := filepath.Join(dir, v.file)
		args := append([]string{"import", aoaDir, "--name", "rfc", "--manifests", manifests, "-o", out}, v.extra...)
		msg, err := exec.Command(deployctl, args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("deployctl %s: %v\n%s", strings.Join(args, " "), err, lastLines(string(msg), 20))
		}
		got, err := loadPlatform(out, os.TempDir())
		if err != nil {
			return "", err
		}
		if len(got.Apps) != len(hand.Apps) {
			return "", fmt.Errorf("%s: %d apps imported, want %d", v.file, len(got.Apps), len(hand.Apps))
		}
		missing, extra := orderDiff(hand, got)
		if v.extra == nil && len(missing) > 0 {
			return "", fmt.Errorf("the import of the app-of-apps does not order %d pairs the hand-written graph orders: %s", len(missing), strings.Join(head(missing, 8), " "))
		}
		implied, edges := impliedEdges(hand, got)
		parts = append(parts, fmt.Sprintf("%s: %d of the hand-written graph's %d edges implied (%d of its %d ordered pairs), %d pairs more", strings.Join(append([]string{"import"}, v.extra...), " "),
			implied, edges, len(hand.closure())-len(missing), len(hand.closure()), len(extra)))
	}
	return strings.Join(parts, "; "), nil
}

func head(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("+%d more", len(s)-n))
	}
	return s
}

// provisionRules: what a provisioner may do (external-provisioner's own
// ClusterRole, less events and snapshots): read claims and classes, make
// volumes.
func provisionRules(provision bool) string {
	if !provision {
		return ""
	}
	return `
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [persistentvolumes]
  verbs: [get, list, watch, create]
- apiGroups: [storage.k8s.io]
  resources: [storageclasses]
  verbs: [get, list, watch]`
}

// rfcClaims: how many PersistentVolumeClaims the stand-in makes, so how
// many volumes its provisioner makes and a teardown retains (SC-4).
func rfcClaims() int {
	n := 0
	for _, a := range rfcApps {
		if a.pvc {
			n++
		}
	}
	return n
}
