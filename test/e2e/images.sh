#!/usr/bin/env bash
# Build container images as OCI tarballs from local static binaries (no
# registry, no container engine): tools/cmd/mkimage, go-containerregistry.
#   images.sh e2e [DIR]      pause, argoexec, e2eapp and the step image, for the
#                            e2e cluster (default DIR: $STATE/images)
#   images.sh reload         rebuild the step image from ./cmd/deploystep and
#                            import it into the running cluster's containerd
#   images.sh product [DIR]  the product's images (default DIR: dist/):
#                            deployctl (executor, ./cmd/deployctl) and
#                            deploystep (in-step, ./cmd/deploystep)
# Images run as 65532:65532 and carry the CA bundle of the build host.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

what=${1:?usage: images.sh e2e|reload|product [DIR]}
TAG=${IMAGE_TAG:-dev}
REG=${IMAGE_REGISTRY:-local.test}
CA=/etc/ssl/certs/ca-certificates.crt
[[ -f $CA ]] || die "no CA bundle at $CA (apt-get install ca-certificates)"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
if [[ $what != product && -f $STATE/pki/ca.crt ]]; then
  # The cluster's images trust the e2e CA too (argocd-server's certificate),
  # the way an organisation bakes its CA into its images.
  cat "$CA" "$STATE/pki/ca.crt" >"$work/ca-bundle.crt"; CA=$work/ca-bundle.crt
fi

BIN=$("$E2E_DIR/build-tools.sh" mkimage | tail -1)
MK=$BIN/mkimage

# gobuild PKG OUT: a static binary of the product module.
gobuild() { (cd "$REPO_ROOT" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags "-s -w" -o "$2" "$1"); }

# step_image OUTDIR: the in-step image from ./cmd/deploystep.
step_image() {
  local src=$work/deploystep
  if ! gobuild ./cmd/deploystep "$src" 2>"$work/deploystep.err"; then
    if [[ $what == product ]]; then cat "$work/deploystep.err" >&2; die "./cmd/deploystep does not build"; fi
    log "WARNING: ./cmd/deploystep does not build yet; the step image carries e2eapp as a stand-in"
    cp "${full:?}/e2eapp" "$src"
    touch "$1/deploystep.standin"
  else
    rm -f "$1/deploystep.standin"
  fi
  # /deploystep: the path the ClusterWorkflowTemplates run (docs/step-contract.md).
  "$MK" -tag "$REG/deploystep:$TAG" -o "$1/deploystep.tar" -file "$src=/deploystep" \
    -entrypoint /deploystep -ca-certs "$CA"
}

case $what in
e2e)
  out=${2:-$STATE/images}; mkdir -p "$out"
  AWF=$(awf_version)
  full=$("$E2E_DIR/build-tools.sh" | tail -1)
  # pause, argoexec and e2eapp depend only on the tools: built once per set's
  # tools key next to its bin dir (argoexec's layer alone takes seconds to gzip).
  cache=$(dirname "$full")/images; mkdir -p "$cache"
  hostca=/etc/ssl/certs/ca-certificates.crt
  [[ -f $cache/pause.tar ]] || "$MK" -tag "$REG/pause:3.10" -o "$cache/pause.tar" -file "$full/pause=/pause" -entrypoint /pause -user 65535:65535
  # argoexec runs as upstream's image does (uid 8737).
  [[ -f $cache/argoexec.tar ]] || "$MK" -tag "$REG/argoexec:$AWF" -o "$cache/argoexec.tar" -file "$full/argoexec=/bin/argoexec" \
    -entrypoint /bin/argoexec -user 8737:8737 -ca-certs "$hostca"
  [[ -f $cache/e2eapp.tar ]] || "$MK" -tag "$REG/e2eapp:$TAG" -o "$cache/e2eapp.tar" -file "$full/e2eapp=/usr/local/bin/e2eapp" \
    -entrypoint /usr/local/bin/e2eapp -ca-certs "$hostca"
  for i in pause argoexec e2eapp; do ln -f "$cache/$i.tar" "$out/$i.tar" 2>/dev/null || cp "$cache/$i.tar" "$out/$i.tar"; done
  step_image "$out"
  ;;
reload)
  SOCK=$STATE/containerd/containerd.sock
  [[ -S $SOCK ]] || die "no running e2e containerd ($SOCK)"
  step_image "$STATE/images"
  ctr -a "$SOCK" -n k8s.io images import "$STATE/images/deploystep.tar" >/dev/null
  log "step image reloaded: $REG/deploystep:$TAG"
  ;;
product)
  out=${2:-$REPO_ROOT/dist}; mkdir -p "$out"
  gobuild ./cmd/deployctl "$work/deployctl" || die "./cmd/deployctl does not build"
  "$MK" -tag "$REG/deployctl:$TAG" -o "$out/deployctl.tar" -file "$work/deployctl=/usr/local/bin/deployctl" \
    -entrypoint /usr/local/bin/deployctl -ca-certs "$CA"
  step_image "$out"
  ;;
*) die "usage: images.sh e2e|reload|product [DIR]" ;;
esac
