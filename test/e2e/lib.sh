# Shared settings and helpers of the e2e harness scripts (sourced, not run).
# Every address used is loopback or one the harness creates itself.

E2E_DIR=${E2E_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
REPO_ROOT=$(cd "$E2E_DIR/../.." && pwd)
TOOLS_DIR=$E2E_DIR/tools
# All runtime state: pki, etcd data, containerd root, kubelet root, logs, pidfiles.
STATE=${E2E_STATE_DIR:-/var/tmp/deployctl-e2e}
RUN=$STATE/run          # pidfiles and logs
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/deployctl-e2e

# Addresses. NODE_IP lives on a dummy interface the harness creates; the
# apiserver, kubelet, CoreDNS and argocd-server listen there so pods reach
# them through Services. Pods live on the CNI bridge. Nothing uses eth0.
DUMMY_IF=dctl-e2e0
BRIDGE_IF=dctl-cni0
NODE_IP=10.213.0.1
NODE_NAME=e2e-node
POD_CIDR=10.213.128.0/24
SERVICE_CIDR=10.213.64.0/20
KUBERNETES_SVC_IP=10.213.64.1
DNS_SVC_IP=10.213.64.10
APISERVER=https://$NODE_IP:6443
ARGOCD_ADDR=$NODE_IP:8080
GIT_PORT=9418
# The same repository as pods reach it in E2E_EMPTY mode (addons.sh).
GIT_POD_URL=git://git.default.svc.cluster.local:$GIT_PORT/platform.git
FW_CHAIN=DCTL-E2E-FWD
IN_CHAIN=DCTL-E2E-IN

KUBECONFIG=$STATE/pki/admin.kubeconfig
export KUBECONFIG

ts0=${ts0:-$(date +%s)}
log() { printf '[%4ss] %s\n' "$(( $(date +%s) - ts0 ))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# waitfor CMD [SECONDS]: poll CMD once a second until it succeeds.
waitfor() {
  local i
  for ((i = 0; i < ${2:-60}; i++)); do
    if eval "$1" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  log "timeout after ${2:-60}s: $1"
  return 1
}

# start NAME CMD...: run CMD in the background, log to $RUN/NAME.log, pid to
# $RUN/NAME.pid, the command line to $RUN/NAME.cmd (restart.sh runs it again).
# Environment for CMD is passed explicitly: start NAME env K=V ... CMD.
start() {
  local name=$1; shift
  mkdir -p "$RUN"
  printf '%q ' "$@" >"$RUN/$name.cmd"
  nohup "$@" >>"$RUN/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
  echo "$name $!" >>"$RUN/pids.all"
}

# stop PIDFILE: TERM, wait up to 10 s, then KILL; only the pid recorded in the file.
# The file goes first: supervise.sh leaves a process without one alone.
stop_pidfile() {
  local f=$1 p i
  [[ -f $f ]] || return 0
  p=$(cat "$f")
  rm -f "$f"
  if [[ -n $p ]] && kill -0 "$p" 2>/dev/null; then
    kill "$p" 2>/dev/null || true
    kill -CONT "$p" 2>/dev/null || true # a process the scenario stopped (SIGSTOP) acts on TERM only when continued
    for ((i = 0; i < 20; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null || true
  fi
}

# Version sets (issue 13): which Argo CD and Argo Workflows the cluster runs,
# on the same Kubernetes 1.32.3, etcd and CoreDNS (tools/go.mod; a kubelet
# >= 1.35 refuses this VM's cgroup v1 and containerd 1.6).
#   oldest  Argo CD v3.0.23 (tools/go.mod)      + Argo Workflows v3.7.18 (tools/awf)
#   newest  Argo CD v3.6.1  (tools/argocd-v3.6) + Argo Workflows v4.0.7  (tools/awf)
# E2E_VERSIONS picks one; unset, the set the running cluster was brought up
# with ($STATE/versions), else newest. run.sh runs the scenario on each.
E2E_SETS="oldest newest"
E2E_VERSIONS=${E2E_VERSIONS:-$(cat "$STATE/versions" 2>/dev/null || echo newest)}
case $E2E_VERSIONS in
oldest) ACD_DIR=$TOOLS_DIR AWF_MAJOR=v3 ;;
newest) ACD_DIR=$TOOLS_DIR/argocd-v3.6 AWF_MAJOR=v4 ;;
*) echo "E2E_VERSIONS=$E2E_VERSIONS: want one of: $E2E_SETS" >&2; exit 3 ;;
esac
AWF_DIR=$TOOLS_DIR/awf
AWF_MODULE=github.com/argoproj/argo-workflows/$AWF_MAJOR
export E2E_VERSIONS

gomod_version() { # MODULE [GO.MOD]: the required version of MODULE
  awk -v m="$1" '$1 == m && $2 ~ /^v/ {print $2; exit}' "${2:-$TOOLS_DIR/go.mod}"
}
awf_version() { gomod_version "$AWF_MODULE" "$AWF_DIR/go.mod"; }
acd_version() { gomod_version github.com/argoproj/argo-cd/v3 "$ACD_DIR/go.mod"; }
versions_label() { echo "$E2E_VERSIONS: Argo CD $(acd_version), Argo Workflows $(awf_version), Kubernetes $(gomod_version k8s.io/kubernetes)"; }

# modgo DIR ARGS...: go in tools module DIR, with the toolchain its go.mod
# names (argocd-v3.6 needs Go 1.27; GOTOOLCHAIN fetches it through the proxy).
modgo() {
  local dir=$1 tc; shift
  tc=$(awk '$1 == "toolchain" {print $2}' "$dir/go.mod")
  (cd "$dir" && GOTOOLCHAIN=${tc:-local} go "$@")
}

# module_key DIR: hash of a tools module's sources (symlinked cmds followed),
# build-tools.sh and the Go version that builds it.
module_key() {
  ( cd "$1" && cat go.mod go.sum tools.go $(find -L cmd -name '*.go' 2>/dev/null | sort) "$E2E_DIR/build-tools.sh"; modgo "$1" version ) | sha256sum | cut -c1-16
}
module_bin() { echo "$CACHE_ROOT/$(basename "$1")-$(module_key "$1")/bin"; }

# The bin dir of the current set: symlinks into its modules' bin dirs.
tools_key() {
  { echo "$E2E_VERSIONS"; module_key "$TOOLS_DIR"; module_key "$AWF_DIR"; [[ $ACD_DIR == "$TOOLS_DIR" ]] || module_key "$ACD_DIR"; } | sha256sum | cut -c1-16
}
tools_bin() { echo "$CACHE_ROOT/set-$E2E_VERSIONS-$(tools_key)/bin"; }

# host_service NS NAME PORTSPEC...: a Service without selector whose only
# endpoint is NODE_IP, so pods reach a host process by its cluster DNS name.
# PORTSPEC is name:port:targetPort:protocol; HOST_SVC_IP fixes the cluster IP.
host_service() {
  local ns=$1 name=$2; shift 2
  local sp="" ep="" spec n p tp proto
  for spec in "$@"; do
    IFS=: read -r n p tp proto <<<"$spec"
    sp+="  - {name: $n, port: $p, targetPort: $tp, protocol: $proto}"$'\n'
    ep+="- {name: $n, port: $tp, protocol: $proto}"$'\n'
  done
  kubectl apply --server-side --force-conflicts --field-manager=e2e-harness -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: $name, namespace: $ns, labels: {e2e.deployctl.dev/host-service: "true"}}
spec:
  ${HOST_SVC_IP:+clusterIP: $HOST_SVC_IP}
  ports:
$sp---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $name-host
  namespace: $ns
  labels: {kubernetes.io/service-name: $name, endpointslice.kubernetes.io/managed-by: e2e.deployctl.dev}
addressType: IPv4
endpoints:
- addresses: [$NODE_IP]
  conditions: {ready: true}
ports:
$ep
YAML
}
