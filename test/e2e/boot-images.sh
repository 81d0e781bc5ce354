#!/usr/bin/env bash
# Images of the bootstrap e2e path (issue 26), as OCI tarballs, from local
# binaries with tools/cmd/mkimage (no registry, no container engine): what
# running Argo CD, Argo Workflows, Argo Events and Sealed Secrets AS PODS
# needs. Tags are the modules' versions, the ones the built charts
# (tools/boot/cmd/mkcharts) name.
#   boot-images.sh DIR    writes DIR/<name>.tar
#   local.test/argocd:<acd>              the multi-call argocd (ARGOCD_BINARY_NAME picks
#                                        the component), git and /bin/sh with their
#                                        shared libraries from this host (ldd closure:
#                                        the repo-server runs git and git-verify-wrapper.sh)
#   local.test/redis:<acd>               this host's redis-server (Debian) and its libraries
#   local.test/workflow-controller:<awf> local.test/argocli:<awf>   (argoexec: images.sh e2e)
#   local.test/argo-events:<aev>  local.test/sealed-secrets-controller:<ss>  local.test/nats:<nats>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
out=${1:?usage: boot-images.sh DIR}; mkdir -p "$out"
[[ $E2E_VERSIONS == newest ]] || die "the bootstrap path runs on the newest set"
full=$("$E2E_DIR/build-tools.sh" | tail -1)
boot=$("$E2E_DIR/build-boot.sh" | tail -1)
MK=$full/mkimage
CA=/etc/ssl/certs/ca-certificates.crt
REG=local.test
ACD=$(acd_version); AWF=$(awf_version)
AEV=$(gomod_version github.com/argoproj/argo-events "$TOOLS_DIR/boot-events/go.mod")
SS=$(gomod_version github.com/bitnami-labs/sealed-secrets "$TOOLS_DIR/boot-events/go.mod")
NATS=$(gomod_version github.com/nats-io/nats-server/v2 "$TOOLS_DIR/boot/go.mod")
GOMODCACHE=$(modgo "$ACD_DIR" env GOMODCACHE)
wrapper=$GOMODCACHE/github.com/argoproj/argo-cd/v3@$ACD/hack/git-verify-wrapper.sh
[[ -f $wrapper ]] || modgo "$ACD_DIR" mod download github.com/argoproj/argo-cd/v3

# closure BIN...: -file arguments for each program and every shared library
# it loads (same paths in the image), the dynamic loader included.
closure() {
  local f
  for f in "$@"; do echo "-file=$f=$f"; done
  ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u | while read -r f; do
    echo "-file=$(readlink -f "$f")=$f"
  done
}
# Built once per pair of tools bin dirs, next to the boot programs, then
# linked into DIR (the argocd image alone takes tens of seconds to gzip).
# This script's own hash is in the name: a change to an image rebuilds them.
cache=$(dirname "$boot")/images-$(basename "$(dirname "$full")")-$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-8); mkdir -p "$cache"
# The module cache holds files read-only and never executable (0444): the
# repo-server runs the wrapper, so the image gets an executable copy.
install -m 0755 "$wrapper" "$cache/git-verify-wrapper.sh"
mk() { # NAME TAG ARGS...
  local name=$1 tag=$2; shift 2
  if [[ ! -f $cache/$name.tar ]]; then
    "$MK" -tag "$REG/$name:$tag" -o "$cache/$name.tar.tmp" -ca-certs "$CA" "$@" >/dev/null
    mv "$cache/$name.tar.tmp" "$cache/$name.tar"
  fi
  ln -f "$cache/$name.tar" "$out/$name.tar" 2>/dev/null || cp "$cache/$name.tar" "$out/$name.tar"
}
# shellcheck disable=SC2046
mk argocd "$ACD" -file "$full/argocd=/usr/local/bin/argocd" -file "$cache/git-verify-wrapper.sh=/usr/local/bin/git-verify-wrapper.sh" \
  $(closure /usr/bin/git /usr/bin/dash) -file /usr/bin/dash=/bin/sh -user 999:999 &
# shellcheck disable=SC2046
mk redis "$ACD" $(closure /usr/bin/redis-server) -entrypoint /usr/bin/redis-server -user 999:999 &
mk workflow-controller "$AWF" -file "$full/workflow-controller=/usr/local/bin/workflow-controller" \
  -entrypoint /usr/local/bin/workflow-controller -user 8737:8737 &
mk argocli "$AWF" -file "$full/argo=/usr/local/bin/argo" -entrypoint /usr/local/bin/argo -user 8737:8737 &
wait
mk argo-events "$AEV" -file "$boot/argo-events=/bin/argo-events" -entrypoint /bin/argo-events -user 9731:9731 &
mk sealed-secrets-controller "$SS" -file "$boot/sealed-secrets-controller=/usr/local/bin/controller" \
  -entrypoint /usr/local/bin/controller -user 1001:1001 &
mk nats "$NATS" -file "$boot/nats-server=/nats-server" -entrypoint /nats-server -user 1000:1000 &
wait
ls "$out"/*.tar >/dev/null
log "boot images: $(cd "$out" && ls *.tar | tr '\n' ' ')"
