#!/usr/bin/env bash
# Host networking of the e2e cluster, and its exact undo.
#   net.sh up    a dummy interface with NODE_IP; the Service CIDR routed into it
#                (a Service IP that kube-proxy has not translated goes nowhere,
#                never out of eth0); forwarding only bridge <-> bridge (pods
#                cannot reach any other host); saves the sysctls it or the
#                kubelet/kube-proxy may change.
#   net.sh down  removes all of it and restores the sysctls.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

N=$STATE/net
SYSCTLS="net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
net.ipv4.conf.all.route_localnet vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.netfilter.nf_conntrack_max
net.netfilter.nf_conntrack_tcp_timeout_established net.netfilter.nf_conntrack_tcp_timeout_close_wait"

up() {
  mkdir -p "$N"
  if [[ ! -f $N/sysctl.orig ]]; then
    for k in $SYSCTLS; do v=$(sysctl -n "$k" 2>/dev/null) && printf '%s=%s\n' "$k" "$v"; done >"$N/sysctl.orig"
  fi
  # A dummy interface; where the kernel has no dummy driver, a bridge without
  # ports serves the same purpose (a local address no traffic leaves from).
  if ! ip link show "$DUMMY_IF" >/dev/null 2>&1; then
    ip link add "$DUMMY_IF" type dummy 2>/dev/null || ip link add "$DUMMY_IF" type bridge
  fi
  ip addr replace "$NODE_IP/32" dev "$DUMMY_IF"
  ip link set "$DUMMY_IF" up
  ip route replace "$SERVICE_CIDR" dev "$DUMMY_IF"
  # Pods: bridge <-> bridge only. Anything else forwarded from or to the bridge is dropped.
  iptables -N "$FW_CHAIN" 2>/dev/null || iptables -F "$FW_CHAIN"
  iptables -A "$FW_CHAIN" -i "$BRIDGE_IF" -o "$BRIDGE_IF" -j ACCEPT
  iptables -A "$FW_CHAIN" -i "$BRIDGE_IF" -j DROP
  iptables -A "$FW_CHAIN" -o "$BRIDGE_IF" -j DROP
  iptables -C FORWARD -j "$FW_CHAIN" 2>/dev/null || iptables -I FORWARD 1 -j "$FW_CHAIN"
  # Two listeners cannot be bound to an address (workflow-controller health
  # :6060, application-controller metrics :8082): accept them only from
  # loopback and the harness's own interfaces.
  iptables -N "$IN_CHAIN" 2>/dev/null || iptables -F "$IN_CHAIN"
  for i in lo "$DUMMY_IF" "$BRIDGE_IF"; do iptables -A "$IN_CHAIN" -i "$i" -j RETURN; done
  iptables -A "$IN_CHAIN" -p tcp -m multiport --dports 6060,8082 -j DROP
  iptables -C INPUT -j "$IN_CHAIN" 2>/dev/null || iptables -I INPUT 1 -j "$IN_CHAIN"
  sysctl -qw net.ipv4.ip_forward=1
  if [[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]]; then sysctl -qw net.bridge.bridge-nf-call-iptables=1; fi
}

down() {
  ip link del "$BRIDGE_IF" 2>/dev/null || true
  ip route del "$SERVICE_CIDR" dev "$DUMMY_IF" 2>/dev/null || true
  ip link del "$DUMMY_IF" 2>/dev/null || true
  while iptables -D FORWARD -j "$FW_CHAIN" 2>/dev/null; do :; done
  while iptables -D INPUT -j "$IN_CHAIN" 2>/dev/null; do :; done
  for c in "$FW_CHAIN" "$IN_CHAIN"; do
    iptables -F "$c" 2>/dev/null || true
    iptables -X "$c" 2>/dev/null || true
  done
  # Chains the kubelet and kube-proxy created (KUBE-*), in every table, v4 and v6.
  local ipt t c
  for ipt in iptables ip6tables; do
    command -v $ipt >/dev/null || continue
    for t in filter nat mangle raw; do
      $ipt-save -t $t 2>/dev/null | awk '/^-A [A-Z]+ .*-j KUBE-/ && $2 !~ /^KUBE-/' | while read -r line; do
        eval "$ipt -t $t ${line/#-A/-D}" 2>/dev/null || true
      done
      for c in $($ipt-save -t $t 2>/dev/null | awk -F'[: ]' '/^:KUBE-/{print $2}'); do $ipt -t $t -F "$c" 2>/dev/null || true; done
      for c in $($ipt-save -t $t 2>/dev/null | awk -F'[: ]' '/^:KUBE-/{print $2}'); do $ipt -t $t -X "$c" 2>/dev/null || true; done
    done
  done
  if [[ -f $N/sysctl.orig ]]; then
    while IFS='=' read -r k v; do sysctl -qw "$k=$v" 2>/dev/null || true; done <"$N/sysctl.orig"
    rm -f "$N/sysctl.orig"
  fi
}

"${1:?usage: net.sh up|down}"
