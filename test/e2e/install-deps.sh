#!/usr/bin/env bash
# Install the host programs the e2e cluster needs, from Debian, if missing:
# containerd + runc, CNI plugins, iptables (kube-proxy), redis (Argo CD's
# cache), git (Argo CD's repo-server and the test platform's repository).
# Package services are never started: the harness runs its own instances.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have containerd || need+=(containerd)
have runc || need+=(runc)
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || need+=(containernetworking-plugins)
have iptables || need+=(iptables)
have redis-server || need+=(redis-server)
have git || need+=(git)
have socat || need+=(socat)
have openssl || need+=(openssl)
have curl || need+=(curl)
[[ -f /etc/ssl/certs/ca-certificates.crt ]] || need+=(ca-certificates)
have ip || need+=(iproute2)
have conntrack || need+=(conntrack)
# The bootstrap path (E2E_EMPTY=1, issue 26): Debian's ansible (it carries the
# kubernetes.core collection) and the Python client its modules import.
if [[ ${E2E_EMPTY:-} == 1 ]]; then
  have ansible-playbook || need+=(ansible)
  python3 -c 'import kubernetes' 2>/dev/null || need+=(python3-kubernetes)
fi
# Node-status offload for make e2e-scale (E2E_OFFLOAD=1, issue 24): a PostgreSQL.
if [[ ${E2E_OFFLOAD:-} == 1 ]]; then
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
fi
if ((${#need[@]} == 0)); then log "host packages present"; exit 0; fi

[[ $(id -u) == 0 ]] || die "need root to install: ${need[*]}"
log "installing from Debian: ${need[*]}"
# Keep package services from starting (we run our own, on our own sockets).
made_policy=
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; made_policy=1
fi
trap '[[ -n $made_policy ]] && rm -f /usr/sbin/policy-rc.d' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${need[@]}" >"${TMPDIR:-/tmp}/e2e-apt.log" 2>&1; then
  apt-get update >>"${TMPDIR:-/tmp}/e2e-apt.log" 2>&1
  apt-get install -y --no-install-recommends "${need[@]}" >>"${TMPDIR:-/tmp}/e2e-apt.log" 2>&1 || { tail -20 "${TMPDIR:-/tmp}/e2e-apt.log"; die "apt-get install failed"; }
fi
log "installed: ${need[*]}"
