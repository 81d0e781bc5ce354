#!/usr/bin/env bash
# Bring up the e2e cluster on this machine from the cached tool binaries:
# containerd, etcd 3.5, a one-node Kubernetes (apiserver, controller-manager,
# scheduler, kubelet, kube-proxy), CoreDNS, Argo Workflows, Argo CD and a Git
# daemon on loopback serving the test platform. Every process is recorded in
# $STATE/run/<name>.pid; down.sh stops them by those pids.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ts0=$(date +%s); export ts0

for f in "$RUN"/*.pid; do
  [[ -f $f ]] && kill -0 "$(cat "$f")" 2>/dev/null && die "already up ($f); run down.sh first"
done
[[ $(id -u) == 0 ]] || die "needs root (network interfaces, containerd, kubelet)"
"$E2E_DIR/install-deps.sh"
B=$("$E2E_DIR/build-tools.sh" | tail -1)
export PATH=$B:$PATH
mkdir -p "$RUN"
# Later scripts (down, restart, smoke, the scenario) default to this set.
echo "$E2E_VERSIONS" >"$STATE/versions"
log "versions: $(versions_label)"
"$E2E_DIR/check-clean.sh" baseline
"$E2E_DIR/pki.sh"
"$E2E_DIR/net.sh" up
"$E2E_DIR/images.sh" e2e "$STATE/images" >/dev/null
# E2E_EMPTY=1: nothing of Argo is started; the images the bootstrap's charts run.
[[ ${E2E_EMPTY:-} == 1 ]] && "$E2E_DIR/boot-images.sh" "$STATE/images"
log "network, pki, images ready"
P=$STATE/pki

# --- containerd (its own root, state and socket; sandbox image is ours)
C=$STATE/containerd; SOCK=$C/containerd.sock
mkdir -p "$C" "$STATE/cni/net.d" "$STATE/cni/ipam"
containerd config default | sed \
  -e "s#^root = .*#root = \"$C/root\"#" -e "s#^state = .*#state = \"$C/state\"#" \
  -e "s#/run/containerd/containerd.sock#$SOCK#" \
  -e 's#sandbox_image = .*#sandbox_image = "local.test/pause:3.10"#' \
  -e 's#bin_dir = "/opt/cni/bin"#bin_dir = "/usr/lib/cni"#' \
  -e "s#conf_dir = \"/etc/cni/net.d\"#conf_dir = \"$STATE/cni/net.d\"#" \
  -e 's#restrict_oom_score_adj = false#restrict_oom_score_adj = true#' \
  -e 's#netns_mounts_under_state_dir = false#netns_mounts_under_state_dir = true#' \
  -e "s#path = \"/opt/containerd\"#path = \"$C/opt\"#" \
  -e "s#^\(\s*\)Root = \"\"#\1Root = \"$C/runc\"#" >"$C/config.toml"
start containerd containerd --config "$C/config.toml"
waitfor "ctr -a $SOCK version" 30
for t in "$STATE"/images/*.tar; do ctr -a "$SOCK" -n k8s.io images import "$t" >/dev/null; done
cat >"$STATE/cni/net.d/10-e2e.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "e2e", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE_IF", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
            "dataDir": "$STATE/cni/ipam"}}]}
JSON
log "containerd up, $(ls "$STATE"/images/*.tar | wc -l) images imported"

# --- etcd 3.5, loopback only
start etcd etcd --name e2e --data-dir "$STATE/etcd" --unsafe-no-fsync --log-level warn \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster e2e=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
waitfor "curl -sf http://127.0.0.1:2379/health" 30

# --- control plane, on the dummy interface's address
start kube-apiserver kube-apiserver --etcd-servers=http://127.0.0.1:2379 \
  --bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port=6443 \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range="$SERVICE_CIDR" --authorization-mode=Node,RBAC --allow-privileged=true \
  --kubelet-client-certificate="$P/admin.crt" --kubelet-client-key="$P/admin.key" \
  --kubelet-preferred-address-types=InternalIP --profiling=false
waitfor "kubectl get --raw /readyz" 120
log "apiserver ready"
start kube-controller-manager kube-controller-manager --kubeconfig="$KUBECONFIG" \
  --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" --bind-address=127.0.0.1 \
  --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
  --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" \
  --use-service-account-credentials=true --leader-elect=false --service-cluster-ip-range="$SERVICE_CIDR" --profiling=false
start kube-scheduler kube-scheduler --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
  --authorization-kubeconfig="$KUBECONFIG" --bind-address=127.0.0.1 --leader-elect=false --profiling=false
mkdir -p "$STATE/kubelet"
cat >"$STATE/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $P/ca.crt}}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$SOCK
clusterDNS: [$DNS_SVC_IP]
clusterDomain: cluster.local
resolvConf: ""
failSwapOn: false
tlsCertFile: $P/kubelet.crt
tlsPrivateKeyFile: $P/kubelet.key
serializeImagePulls: false
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
podLogsDir: $STATE/kubelet/pod-logs
YAML
start kubelet kubelet --config="$STATE/kubelet/config.yaml" --kubeconfig="$P/kubelet.kubeconfig" \
  --root-dir="$STATE/kubelet/root" --cert-dir="$STATE/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP"
start kube-proxy kube-proxy --kubeconfig="$KUBECONFIG" --hostname-override="$NODE_NAME" --proxy-mode=iptables \
  --cluster-cidr="$POD_CIDR" --nodeport-addresses="$NODE_IP/32" --conntrack-max-per-core=0 \
  --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0 \
  --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256
waitfor "kubectl get sa default -n default" 60
waitfor "kubectl wait node/$NODE_NAME --for=condition=Ready --timeout=1s" 120
log "node Ready"

"$E2E_DIR/addons.sh"
log "cluster up (state $STATE, KUBECONFIG=$KUBECONFIG)"
# What a person needs next (test/e2e/README.md, "Deploy by hand on the local cluster").
cat <<EOF

The e2e cluster is up. In your shell (and in every new terminal):

  export KUBECONFIG=$KUBECONFIG
  export PATH=$REPO_ROOT/bin:$B:\$PATH      # deployctl (make build); kubectl, argo of the cluster's versions

Then docs/quickstart.md from section 1, its settings as written but these
(test/e2e/README.md, "Deploy by hand on the local cluster"):

  DEPLOYCTL_SRC=$REPO_ROOT
  IMAGE=local.test/deploystep:dev
  GIT_REPO=git://127.0.0.1:$GIT_PORT/platform.git
  ARGOCD_URL=https://$ARGOCD_ADDR
  ARGOCD_CA=$P/ca.crt

Argo CD:      https://$ARGOCD_ADDR   (CA: $P/ca.crt; in pods: argocd-server.argocd.svc:443)
Admin login:  user admin, password: kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath='{.data.password}' | base64 -d
Argo CD CLI:  not built here (the module proxy refuses its dependencies); docs/quickstart.md gets the token through the API.
Git:          git://127.0.0.1:$GIT_PORT/platform.git (test/e2e/testdata/gitrepo: the test platform's and the example's apps)
Next:         make build; the Quickstart as above; make e2e-down when done.
EOF
