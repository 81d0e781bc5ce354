#!/usr/bin/env bash
# Build the programs of the bootstrap e2e path (issue 26) from the Go module
# proxy, or reuse the cached build, the way build-tools.sh builds the cluster's
# (a separate script, so that build-tools.sh, part of every other tools
# module's cache key, stays as it is). Two tools modules:
#   tools/boot         helm (the bootstrap's real helm), nats-server (JetStream)
#   tools/boot-events  argo-events (controller, eventsource, sensor, webhook),
#                      sealed-secrets-controller
# cached by a hash of go.mod, go.sum, tools.go, this script and the Go version:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/deployctl-e2e/<module>-<key>/bin
# Prints a bin dir holding (symlinks to) all four programs as the last line.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BOOT_DIRS=("$TOOLS_DIR/boot" "$TOOLS_DIR/boot-events")

boot_key() { { module_key "$1"; cat "$E2E_DIR/build-boot.sh"; } | sha256sum | cut -c1-16; }
boot_bin() { echo "$CACHE_ROOT/$(basename "$1")-$(boot_key "$1")/bin"; }

# build DIR: every program of tools module DIR into its keyed bin dir.
build() {
  local dir=$1 bin name tmp t0 t1 t2 ldflags
  bin=$(boot_bin "$dir"); name=$(basename "$dir")
  if [[ -f $bin/.complete ]]; then log "$name cached: $bin"; return 0; fi
  t0=$(date +%s)
  modgo "$dir" mod download
  t1=$(date +%s)
  log "$name: modules ready in $((t1 - t0))s; building (nice -n 19)"
  mkdir -p "$CACHE_ROOT"; tmp=$(mktemp -d "$CACHE_ROOT/build.XXXXXX")
  gb() { # OUT LDFLAGS PKG...
    (cd "$dir" && nice -n 19 env CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" ${E2E_GOCACHE:+GOCACHE=$E2E_GOCACHE} \
      GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w $2" -o "$1" "${@:3}")
  }
  case $name in
  boot)
    gb "$tmp/helm" "-X helm.sh/helm/v3/internal/version.version=$(gomod_version helm.sh/helm/v3 "$dir/go.mod")" helm.sh/helm/v3/cmd/helm
    gb "$tmp/nats-server" "" github.com/nats-io/nats-server/v2 ;;
  boot-events)
    gb "$tmp/argo-events" "-X github.com/argoproj/argo-events.version=$(gomod_version github.com/argoproj/argo-events "$dir/go.mod")" \
      github.com/argoproj/argo-events/cmd
    gb "$tmp/sealed-secrets-controller" "-X main.VERSION=$(gomod_version github.com/bitnami-labs/sealed-secrets "$dir/go.mod")" \
      github.com/bitnami-labs/sealed-secrets/cmd/controller ;;
  *) die "unknown boot module $dir" ;;
  esac
  t2=$(date +%s)
  echo "modules=$((t1 - t0))s build=$((t2 - t1))s at $(date -u +%FT%TZ) $(modgo "$dir" version)" >"$tmp/.complete"
  rm -rf "$bin"; mkdir -p "$(dirname "$bin")"; mv "$tmp" "$bin"
  log "$name built in $((t2 - t1))s (+$((t1 - t0))s downloads): $bin"
}

# The keys once, before building: a source edited meanwhile makes the next run build again.
bins=(); for d in "${BOOT_DIRS[@]}"; do bins+=("$(boot_bin "$d")"); done
pids=()
for d in "${BOOT_DIRS[@]}"; do build "$d" & pids+=($!); done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
((rc == 0)) || die "a boot tools module failed to build"
out=$CACHE_ROOT/boot-set-$(printf '%s\n' "${bins[@]}" | sha256sum | cut -c1-16)/bin
if [[ ! -f $out/.complete ]]; then
  tmp=$(mktemp -d "$CACHE_ROOT/set.XXXXXX")
  for b in "${bins[@]}"; do
    [[ -f $b/.complete ]] || die "$b: not built"
    for f in "$b"/*; do ln -s "$f" "$tmp/$(basename "$f")"; done
  done
  touch "$tmp/.complete"; rm -rf "$out"; mkdir -p "$(dirname "$out")"; mv "$tmp" "$out"
fi
echo "$out"
