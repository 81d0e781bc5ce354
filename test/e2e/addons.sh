#!/usr/bin/env bash
# Cluster add-ons, run by up.sh once the node is Ready: cluster DNS (CoreDNS
# on the host), static storage, Argo Workflows, Argo CD (host processes, like
# upstream's Procfile) and the Git daemon with the test platform. Nothing of
# deployctl's: the Argo CD account, its token, the Secrets the workflows
# mount and the health customizations are made by the documented steps
# (docs/quickstart.md), which the scenario runs verbatim.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
B=$("$E2E_DIR/build-tools.sh" | tail -1)
export PATH=$B:$PATH
P=$STATE/pki
AWF=$(awf_version)
ACD=$(acd_version)
GOMODCACHE=$(modgo "$ACD_DIR" env GOMODCACHE)
ACD_MANIFESTS=$GOMODCACHE/github.com/argoproj/argo-cd/v3@$ACD/manifests
[[ -d $ACD_MANIFESTS ]] || modgo "$ACD_DIR" mod download github.com/argoproj/argo-cd/v3
# From the module cache, not tools/awf/third_party (which exists only where the
# tools were built): a clean checkout with cached tools has no third_party.
AWF_MANIFESTS=$GOMODCACHE/$AWF_MODULE@$AWF/manifests
[[ -d $AWF_MANIFESTS ]] || (cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download "$AWF_MODULE@$AWF")
[[ -d $AWF_MANIFESTS ]] || die "no Argo Workflows manifests at $AWF_MANIFESTS"
apply() { kubectl apply --server-side --force-conflicts --field-manager=e2e-harness "$@" >/dev/null; }

# --- CoreDNS: cluster.local only; no forward plugin, so no name ever leaves the machine
mkdir -p "$STATE/coredns"
cat >"$STATE/coredns/Corefile" <<EOF2
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $NODE_IP
    errors
    ready 127.0.0.1:8181
    health 127.0.0.1:8180
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $KUBECONFIG
        pods insecure
    }
    cache 5
    loadbalance
}
EOF2
start coredns coredns -conf "$STATE/coredns/Corefile"
HOST_SVC_IP=$DNS_SVC_IP host_service kube-system kube-dns dns:53:53:UDP dns-tcp:53:53:TCP

# --- storage: no provisioner here; a manual StorageClass and static hostPath PVs
mkdir -p "$STATE/pv"
pvs=""
for i in 0 1 2; do
  mkdir -p "$STATE/pv/pv$i"; chmod 0777 "$STATE/pv/pv$i"
  pvs+="---
apiVersion: v1
kind: PersistentVolume
metadata: {name: e2e-pv-$i}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: e2e-manual
  hostPath: {path: $STATE/pv/pv$i, type: Directory}
"
done
apply -f - <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: e2e-manual}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
$pvs
YAML
kubectl create namespace platform --dry-run=client -o yaml | apply -f -

# E2E_EMPTY=1 (issue 26, the bootstrap path): Kubernetes, CoreDNS and the
# storage class only; the generated bootstrap installs the rest as pods.
# The test platform's Git repository is served to pods too (Argo CD's
# repo-server runs as a pod there): git daemon also listens on NODE_IP, and
# the Service git.default (GIT_POD_URL) points at it.
if [[ ${E2E_EMPTY:-} == 1 ]]; then
  "$E2E_DIR/gitrepo.sh" init
  start git-daemon git daemon --listen=127.0.0.1 --listen="$NODE_IP" --port="$GIT_PORT" --base-path="$STATE/git" --export-all --reuseaddr "$STATE/git"
  host_service default git git:"$GIT_PORT":"$GIT_PORT":TCP
  waitfor "git ls-remote git://$NODE_IP:$GIT_PORT/platform.git" 30
  waitfor "curl -sf http://127.0.0.1:8181/ready" 30
  log "add-ons up (empty cluster): CoreDNS, StorageClass e2e-manual, $GIT_POD_URL; nothing of Argo"
  exit 0
fi

# --- Argo Workflows: CRDs, controller on the host (cluster-wide), executor image local
kubectl create namespace argo --dry-run=client -o yaml | apply -f -
kubectl apply -k "$AWF_MANIFESTS/base/crds/minimal" >/dev/null
# E2E_OFFLOAD=1 (make e2e-scale only, issue 24): node-status offload to a
# PostgreSQL on the host (offload.sh prints the persistence config).
persistence=
[[ ${E2E_OFFLOAD:-} == 1 ]] && persistence=$("$E2E_DIR/offload.sh")
apply -f - <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: workflow-controller-configmap, namespace: argo}
data:
  metricsConfig: |
    enabled: false
  telemetryConfig: |
    enabled: false
${persistence:+  persistence: |
$(sed 's/^/    /' <<<"$persistence")}
YAML
# E2E_WORKFLOW_CONTROLLER_ENV: controller settings. Default DEFAULT_REQUEUE_TIME=1s,
# as the README recommends: Argo's 10 s default shows in every node's end
# (measured: deploy 80 s -> 63 s). E2E_WORKFLOW_CONTROLLER_ENV= keeps Argo's defaults.
# (Argo's default 10s requeue shows in every node's finish time; see README).
# ARGO_EXECUTOR_PLUGINS=true: the agent pod of plugin-mode runs gets the
# deployctl plugin as its sidecar (issue 15); pod-mode runs are unaffected.
# E2E_EXECUTOR_PLUGINS=false starts the controller without it (what most
# installs have), for the preflight's and the executor's diagnosis.
# shellcheck disable=SC2086
start workflow-controller env LEADER_ELECTION_DISABLE=true LEADER_ELECTION_IDENTITY=e2e ARGO_EXECUTOR_PLUGINS=${E2E_EXECUTOR_PLUGINS:-true} ${E2E_WORKFLOW_CONTROLLER_ENV-DEFAULT_REQUEUE_TIME=1s} workflow-controller --kubeconfig "$KUBECONFIG" --namespace argo \
  --executor-image "local.test/argoexec:$AWF" --executor-image-pull-policy Never

# --- Argo CD: CRDs, ConfigMaps and Secrets of install.yaml (no workloads), host processes
kubectl create namespace argocd --dry-run=client -o yaml | apply -f -
awk -v RS='\n---\n' '/\nkind: (CustomResourceDefinition|ConfigMap|Secret)\n/ || /^kind: (CustomResourceDefinition|ConfigMap|Secret)\n/ {print "---"; print}' \
  "$ACD_MANIFESTS/install.yaml" | kubectl apply -n argocd --server-side --force-conflicts --field-manager=e2e-harness -f - >/dev/null
apply -f - <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd, labels: {app.kubernetes.io/part-of: argocd}}
data:
  admin.enabled: "true"
  timeout.reconciliation: 180s
YAML
kubectl -n argocd create secret tls argocd-server-tls --cert="$P/argocd-server.crt" --key="$P/argocd-server.key" \
  --dry-run=client -o yaml | apply -f -
A=$STATE/argocd; mkdir -p "$A"/{tls,ssh,gpg,static,redis,tmp,bin}
# Argo CD 3.6's repo-server runs git-verify-wrapper.sh (upstream's image has
# it in PATH) for every manifest generation, GPG enabled or not; without it
# every app fails with "permission denied". Ours is the module's copy.
install -m 0755 "$ACD_MANIFESTS/../hack/git-verify-wrapper.sh" "$A/bin/git-verify-wrapper.sh"
ACD_ENV=(env PATH="$A/bin:$PATH" KUBECONFIG="$KUBECONFIG" ARGOCD_FAKE_IN_CLUSTER=true ARGOCD_GPG_ENABLED=false ARGOCD_TLS_DATA_PATH="$A/tls"
  ARGOCD_SSH_DATA_PATH="$A/ssh" ARGOCD_GNUPGHOME="$A/gpg" TMPDIR="$A/tmp")
REDIS=127.0.0.1:16379
start redis redis-server --bind 127.0.0.1 --port 16379 --save '' --appendonly no --dir "$A/redis"
# Argo CD 3.6 added mTLS to the repo-server: its default --client-ca-path
# (a Secret mount) is refused together with --disable-tls; 3.0 has no flag.
REPO_MTLS=()
argocd-repo-server --help 2>/dev/null | grep -q -- --client-ca-path && REPO_MTLS=(--client-ca-path "")
# E2E_REPO_SERVER_ENV (make e2e-scale, issue 24): more environment for the
# repo-server, e.g. ARGOCD_GIT_LS_REMOTE_PARALLELISM_LIMIT=8
# ARGOCD_GIT_ATTEMPTS_COUNT=3: 50 first syncs at once had the harness's git
# daemon reset ls-remote connections ("failed to list refs"), even with
# E2E_GIT_MAX_CONNECTIONS=0.
# shellcheck disable=SC2086
start argocd-repo-server "${ACD_ENV[@]}" ${E2E_REPO_SERVER_ENV:-} argocd-repo-server --address 127.0.0.1 --port 8081 --metrics-address 127.0.0.1 \
  --redis "$REDIS" --disable-tls "${REPO_MTLS[@]}"
# E2E_CONTROLLER_ARGS (make e2e-scale, issue 24): more flags for the
# application controller, e.g. "--operation-processors 50 --status-processors
# 50" (Argo CD's defaults are 10 and 20: a 75-app level of a 750-app platform
# queues its syncs 10 at a time). Unset in CI.
# shellcheck disable=SC2086
start argocd-application-controller "${ACD_ENV[@]}" HOSTNAME=argocd-application-controller-0 argocd-application-controller \
  --namespace argocd --redis "$REDIS" --repo-server 127.0.0.1:8081 --repo-server-plaintext \
  --metrics-port 8082 --app-resync 180 ${E2E_CONTROLLER_ARGS:-}
# argocd-server's REST gateway dials its own gRPC port on localhost, so the
# server listens on loopback; a forwarder gives pods (and the host) NODE_IP:8080.
start argocd-server "${ACD_ENV[@]}" argocd-server --namespace argocd --address 127.0.0.1 --port 8080 \
  --metrics-address 127.0.0.1 --redis "$REDIS" --repo-server 127.0.0.1:8081 --repo-server-plaintext \
  --staticassets "$A/static" --dex-server ""
start argocd-forward socat "TCP-LISTEN:8080,bind=$NODE_IP,reuseaddr,fork" TCP:127.0.0.1:8080
host_service argocd argocd-server https:443:8080:TCP http:80:8080:TCP
# In a real install these are pods, restarted when they die (Argo CD
# v3.6.1's application controller panicked here once, test/e2e/README.md
# "Restarts"): supervise.sh restarts them and records each restart.
rm -f "$RUN/restarts.log"
start supervisor "$E2E_DIR/supervise.sh" argocd-application-controller argocd-repo-server argocd-server workflow-controller

# --- Git daemon on loopback serving the test platform (repo-server runs on the host)
# E2E_GIT_MAX_CONNECTIONS (make e2e-scale, issue 24): git daemon's own default
# is 32; the first level of a 750-app platform (75 syncs at once) passed it,
# and 8 syncs failed ("failed to list refs: … connection reset by peer").
# Lifted, 2 of 1,000 still failed so: see E2E_REPO_SERVER_ENV below.
"$E2E_DIR/gitrepo.sh" init
start git-daemon git daemon --listen=127.0.0.1 --port="$GIT_PORT" --base-path="$STATE/git" --export-all --reuseaddr \
  --max-connections="${E2E_GIT_MAX_CONNECTIONS:-32}" "$STATE/git"

# --- wait until Argo CD answers (its API token and the Secrets are the Quickstart's)
waitfor "git ls-remote git://127.0.0.1:$GIT_PORT/platform.git" 30
waitfor "curl -sf --cacert $P/ca.crt https://$ARGOCD_ADDR/healthz" 90
log "argocd-server answers"
waitfor "kubectl -n argocd get secret argocd-initial-admin-secret" 90
waitfor "curl -sf http://127.0.0.1:8181/ready" 30
log "add-ons up: CoreDNS, Argo Workflows $AWF, Argo CD $ACD, git://127.0.0.1:$GIT_PORT/platform.git"
