#!/usr/bin/env bash
# Build the e2e harness's upstream programs from the Go module proxy, or reuse
# the cached build. The cache is keyed by a hash of tools/go.mod, go.sum, our
# tool sources, this script and the Go version, and lives outside the repo:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/deployctl-e2e/<key>/bin
# Prints the bin dir as the last line of stdout.
#   build-tools.sh            everything, one `go build` invocation
#   build-tools.sh mkimage    just the image builder (for `make image`)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

only=${1:-}
BIN=$(tools_bin)
if [[ -z $only && -f $BIN/.complete ]]; then
  log "tools cached: $BIN"
  echo "$BIN"; exit 0
fi
if [[ $only == mkimage && -x $BIN/mkimage ]]; then echo "$BIN"; exit 0; fi

export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
[[ -n ${E2E_GOCACHE:-} ]] && export GOCACHE=$E2E_GOCACHE

AWF=$(gomod_version github.com/argoproj/argo-workflows/v3)
main_awf=$(gomod_version github.com/argoproj/argo-workflows/v3 "$REPO_ROOT/go.mod" || true)
if [[ -n $main_awf && $main_awf != "$AWF" ]]; then
  die "argo-workflows $AWF in tools/go.mod, $main_awf in go.mod: keep them equal"
fi

# argoexec needs workflow/executor/os-specific/signal_linux.go, a symlink
# upstream that module zips drop: extract the module and add it back.
prepare_argo() {
  local dst=$TOOLS_DIR/third_party/argo-workflows
  [[ -f $dst/.version && $(cat "$dst/.version") == "$AWF" ]] && return 0
  local src
  src=$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "github.com/argoproj/argo-workflows/v3@$AWF" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [[ -d $src ]] || die "could not download argo-workflows $AWF"
  rm -rf "$dst"; mkdir -p "$(dirname "$dst")"
  cp -r "$src" "$dst"; chmod -R u+w "$dst"
  local os=$dst/workflow/executor/os-specific
  [[ -f $os/signal_linux.go ]] || cp "$os/signal_darwin.go" "$os/signal_linux.go"
  echo "$AWF" >"$dst/.version"
}
prepare_argo

cd "$TOOLS_DIR"
K8S=$(gomod_version k8s.io/kubernetes)
ACD=$(gomod_version github.com/argoproj/argo-cd/v3)
kminor=${K8S#v1.}; kminor=${kminor%%.*}
LDFLAGS="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $p.gitVersion=$K8S -X $p.gitMajor=1 -X $p.gitMinor=$kminor -X $p.gitTreeState=clean"
done
LDFLAGS+=" -X github.com/argoproj/argo-workflows/v3.version=$AWF"
LDFLAGS+=" -X github.com/argoproj/argo-cd/v3/common.version=${ACD#v}"

if [[ $only == mkimage ]]; then
  mkdir -p "$BIN"
  go build -trimpath -ldflags "$LDFLAGS" -o "$BIN/mkimage" ./cmd/mkimage
  echo "$BIN"; exit 0
fi

t0=$(date +%s)
log "downloading modules (k8s $K8S, argo-workflows $AWF, argo-cd $ACD)"
go mod download
t1=$(date +%s)
log "modules ready in $((t1 - t0))s; building (nice -n 19, one go build)"
tmp=$(mktemp -d "$CACHE_ROOT/build.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT"; mktemp -d "$CACHE_ROOT/build.XXXXXX"; })
nice -n 19 go build -trimpath -ldflags "$LDFLAGS" -o "$tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kube-proxy \
  k8s.io/kubernetes/cmd/kubectl \
  go.etcd.io/etcd/server/v3 \
  github.com/argoproj/argo-workflows/v3/cmd/workflow-controller \
  github.com/argoproj/argo-workflows/v3/cmd/argoexec \
  github.com/argoproj/argo-workflows/v3/cmd/argo \
  ./cmd/argocd ./cmd/coredns ./cmd/mkimage ./cmd/pause ./cmd/e2eapp
t2=$(date +%s)
mv "$tmp/server" "$tmp/etcd"
for c in argocd-server argocd-repo-server argocd-application-controller; do ln -sf argocd "$tmp/$c"; done
echo "modules=$((t1 - t0))s build=$((t2 - t1))s at $(date -u +%FT%TZ) $(go version)" >"$tmp/.complete"
rm -rf "$BIN"; mkdir -p "$(dirname "$BIN")"; mv "$tmp" "$BIN"
log "tools built in $((t2 - t1))s (+$((t1 - t0))s downloads): $BIN"
echo "$BIN"
