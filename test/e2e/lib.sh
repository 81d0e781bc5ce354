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
stop_pidfile() {
  local f=$1 p i
  [[ -f $f ]] || return 0
  p=$(cat "$f")
  if [[ -n $p ]] && kill -0 "$p" 2>/dev/null; then
    kill "$p" 2>/dev/null || true
    kill -CONT "$p" 2>/dev/null || true # a process the scenario stopped (SIGSTOP) acts on TERM only when continued
    for ((i = 0; i < 20; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$f"
}

# The bin dir of the current tool versions (see build-tools.sh).
tools_key() {
  ( cd "$TOOLS_DIR" && cat go.mod go.sum tools.go $(find cmd -name '*.go' | sort) "$E2E_DIR/build-tools.sh"; go version ) | sha256sum | cut -c1-16
}
tools_bin() { echo "$CACHE_ROOT/$(tools_key)/bin"; }

gomod_version() { # MODULE [GO.MOD]: the required version of MODULE
  awk -v m="$1" '$1 == m && $2 ~ /^v/ {print $2; exit}' "${2:-$TOOLS_DIR/go.mod}"
}
