#!/usr/bin/env bash
# Build the e2e harness's upstream programs from the Go module proxy, or reuse
# the cached build. Three tools modules (see lib.sh's version sets), each
# built in one `go build` per program set and cached outside the repo by a
# hash of its go.mod, go.sum, our tool sources, this script and its Go version:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/deployctl-e2e/<module>-<key>/bin
# A set's bin dir (set-<set>-<key>/bin) holds symlinks into its modules' bins.
# Prints the set's bin dir as the last line of stdout.
#   build-tools.sh            the programs of the set E2E_VERSIONS
#   build-tools.sh all        every set, the modules built side by side (CI)
#   build-tools.sh module DIR one tools module (tools, tools/awf, ...)
#   build-tools.sh mkimage    just the image builder (for `make image`)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

only=${1:-}

# The product's Argo Workflows v3 (go.mod) is the one the oldest set runs.
main_awf=$(gomod_version github.com/argoproj/argo-workflows/v3 "$REPO_ROOT/go.mod" || true)
tools_awf=$(gomod_version github.com/argoproj/argo-workflows/v3 "$AWF_DIR/go.mod")
if [[ -n $main_awf && $main_awf != "$tools_awf" ]]; then
  die "argo-workflows $tools_awf in tools/awf/go.mod, $main_awf in go.mod: keep them equal"
fi

# prepare_third_party DIR: the argo-workflows module zips lack
# workflow/executor/osspecific/signal_linux.go (a symlink upstream, dropped by
# module zips), so argoexec does not compile from them; and the argo CLI
# embeds ui/dist/app, which is built by yarn, not shipped. Extract every
# module DIR's go.mod replaces to ./third_party/<name>, add a copy of
# signal_darwin.go and an empty UI page (the e2e never runs `argo server`).
prepare_third_party() {
  local dir=$1 mod dst ver src os
  while read -r mod dst; do
    ver=$(gomod_version "$mod" "$dir/go.mod")
    dst=$dir/${dst#./}
    [[ -f $dst/.version && $(cat "$dst/.version") == "$ver" ]] && continue
    src=$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "$mod@$ver" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
    [[ -d $src ]] || die "could not download $mod@$ver"
    rm -rf "$dst"; mkdir -p "$(dirname "$dst")"
    cp -r "$src" "$dst"; chmod -R u+w "$dst"
    os=$dst/workflow/executor/osspecific
    [[ -f $os/signal_linux.go ]] || cp "$os/signal_darwin.go" "$os/signal_linux.go"
    mkdir -p "$dst/ui/dist/app"; echo '<!-- UI not built -->' >"$dst/ui/dist/app/index.html"
    echo "$ver" >"$dst/.version"
  done < <(awk '$2 == "=>" && $3 ~ /^\.\/third_party\// {print $1, $3}' "$dir/go.mod")
}

# build_module DIR: build every program of tools module DIR into its keyed
# bin dir unless it is there already.
build_module() {
  local dir=$1 bin name ldflags k8s kminor acd v tmp t0 t1 t2
  bin=$(module_bin "$dir"); name=$(basename "$dir")
  if [[ -f $bin/.complete ]]; then log "$name cached: $bin"; return 0; fi
  prepare_third_party "$dir"
  ldflags="-s -w"
  k8s=$(gomod_version k8s.io/kubernetes "$dir/go.mod")
  if [[ -n $k8s ]]; then
    kminor=${k8s#v1.}; kminor=${kminor%%.*}
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $p.gitVersion=$k8s -X $p.gitMajor=1 -X $p.gitMinor=$kminor -X $p.gitTreeState=clean"
    done
  fi
  acd=$(gomod_version github.com/argoproj/argo-cd/v3 "$dir/go.mod")
  [[ -n $acd ]] && ldflags+=" -X github.com/argoproj/argo-cd/v3/common.version=${acd#v}"
  for m in v3 v4; do
    v=$(gomod_version "github.com/argoproj/argo-workflows/$m" "$dir/go.mod")
    [[ -n $v ]] && ldflags+=" -X github.com/argoproj/argo-workflows/$m.version=$v"
  done
  t0=$(date +%s)
  log "$name: downloading modules"
  modgo "$dir" mod download
  t1=$(date +%s)
  log "$name: modules ready in $((t1 - t0))s; building (nice -n 19)"
  mkdir -p "$CACHE_ROOT"; tmp=$(mktemp -d "$CACHE_ROOT/build.XXXXXX")
  gb() { nice -n 19 env CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" ${E2E_GOCACHE:+GOCACHE=$E2E_GOCACHE} \
    bash -c 'cd "$1" && shift && GOTOOLCHAIN=$0 go build -trimpath -ldflags "$1" -o "$2" "${@:3}"' \
    "$(awk '$1 == "toolchain" {print $2}' "$dir/go.mod" | grep . || echo local)" "$dir" "$ldflags" "$@"; }
  case $name in
  tools)
    gb "$tmp/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy \
      k8s.io/kubernetes/cmd/kubectl go.etcd.io/etcd/server/v3 \
      ./cmd/argocd ./cmd/coredns ./cmd/mkimage ./cmd/pause ./cmd/e2eapp
    mv "$tmp/server" "$tmp/etcd" ;;
  argocd-*)
    gb "$tmp/" ./cmd/argocd ;;
  awf)
    # One go build per major version: their commands share names.
    for m in v3 v4; do
      mkdir -p "$tmp/$m"
      gb "$tmp/$m/" "github.com/argoproj/argo-workflows/$m/cmd/workflow-controller" \
        "github.com/argoproj/argo-workflows/$m/cmd/argoexec" "github.com/argoproj/argo-workflows/$m/cmd/argo"
    done
    gb "$tmp/" ./cmd/awfvalidate ;;
  *) die "unknown tools module $dir" ;;
  esac
  t2=$(date +%s)
  echo "modules=$((t1 - t0))s build=$((t2 - t1))s at $(date -u +%FT%TZ) $(modgo "$dir" version)" >"$tmp/.complete"
  rm -rf "$bin"; mkdir -p "$(dirname "$bin")"; mv "$tmp" "$bin"
  log "$name built in $((t2 - t1))s (+$((t1 - t0))s downloads): $bin"
}

# assemble: the current set's bin dir, symlinks into its modules' bins.
assemble() {
  local out tmp base awf acd f
  out=$(tools_bin)
  [[ -f $out/.complete ]] && return 0
  base=$(module_bin "$TOOLS_DIR"); awf=$(module_bin "$AWF_DIR"); acd=$(module_bin "$ACD_DIR")
  tmp=$(mktemp -d "$CACHE_ROOT/set.XXXXXX")
  for f in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd coredns mkimage pause e2eapp; do
    ln -s "$base/$f" "$tmp/$f"
  done
  ln -s "$acd/argocd" "$tmp/argocd"
  for c in argocd-server argocd-repo-server argocd-application-controller; do ln -s argocd "$tmp/$c"; done
  for f in workflow-controller argoexec argo; do ln -s "$awf/$AWF_MAJOR/$f" "$tmp/$f"; done
  ln -s "$awf/awfvalidate" "$tmp/awfvalidate"
  versions_label >"$tmp/.complete"
  rm -rf "$out"; mkdir -p "$(dirname "$out")"; mv "$tmp" "$out"
}

case $only in
mkimage)
  bin=$(module_bin "$TOOLS_DIR")
  if [[ ! -x $bin/mkimage ]]; then
    mkdir -p "$bin"
    modgo "$TOOLS_DIR" build -trimpath -ldflags "-s -w" -o "$bin/mkimage" ./cmd/mkimage
  fi
  echo "$bin"; exit 0 ;;
module)
  build_module "$(cd "${2:?usage: build-tools.sh module DIR}" && pwd)"
  module_bin "$(cd "$2" && pwd)" ;;
all)
  # The modules share no build output; side by side they keep both cores busy
  # through each one's link and single-package phases.
  pids=()
  for d in "$TOOLS_DIR" "$TOOLS_DIR/argocd-v3.6" "$AWF_DIR"; do build_module "$d" & pids+=($!); done
  rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
  (( rc == 0 )) || die "a tools module failed to build"
  for s in $E2E_SETS; do E2E_VERSIONS=$s "$0" >/dev/null; done
  echo "$CACHE_ROOT" ;;
"")
  build_module "$TOOLS_DIR"
  [[ $ACD_DIR == "$TOOLS_DIR" ]] || build_module "$ACD_DIR"
  build_module "$AWF_DIR"
  assemble
  log "tools of $(versions_label)"
  tools_bin ;;
*) die "usage: build-tools.sh [all|module DIR|mkimage]" ;;
esac
