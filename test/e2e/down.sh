#!/usr/bin/env bash
# Stop the e2e cluster and undo everything up.sh did to the host: processes
# (by their pidfiles only), pod sandboxes, mounts, network namespaces,
# interfaces, routes, iptables rules, cgroups, sysctls. Then prints the leak
# check (check-clean.sh) and exits non-zero if anything is left.
# Logs are kept in $STATE/logs; E2E_KEEP_STATE=1 keeps all state.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ts0=$(date +%s)
B=$(tools_bin); export PATH=$B:$PATH
SOCK=$STATE/containerd/containerd.sock

# 1. Nothing may re-create pods or re-sync while we tear down; the
#    supervisor first, so that it starts nothing again.
for c in supervisor argocd-application-controller argocd-server argocd-forward argocd-repo-server workflow-controller kube-controller-manager kube-scheduler; do
  stop_pidfile "$RUN/$c.pid"
done
# 2. Delete every pod through the API while the kubelet runs, so it stops the
#    sandboxes itself (CNI DEL, netns removal); wait until containerd has no task.
if [[ -f $RUN/kube-apiserver.pid ]] && kubectl get --raw /readyz >/dev/null 2>&1; then
  kubectl delete pods -A --all --force --grace-period=0 --wait=false >/dev/null 2>&1 || true
  for ((i = 0; i < 60; i++)); do
    n=$(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null | wc -l) || n=0
    [[ $n == 0 ]] && break
    sleep 1
  done
  log "pods gone ($i s)"
fi
for c in kubelet kube-proxy coredns git-daemon redis postgres kube-apiserver etcd; do stop_pidfile "$RUN/$c.pid"; done
# 3. Containers the kubelet did not get to: kill and remove through containerd.
if [[ -S $SOCK ]]; then
  for t in $(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -a "$SOCK" -n k8s.io tasks kill -s KILL "$t" >/dev/null 2>&1 || true
    ctr -a "$SOCK" -n k8s.io tasks delete -f "$t" >/dev/null 2>&1 || true
  done
  for c in $(ctr -a "$SOCK" -n k8s.io containers ls -q 2>/dev/null); do
    ctr -a "$SOCK" -n k8s.io containers delete "$c" >/dev/null 2>&1 || true
  done
fi
stop_pidfile "$RUN/containerd.pid"
# Shims whose containerd is gone: they belong to this state dir (matched by
# the socket path in their command line), stopped by pid.
for d in /proc/[0-9]*; do
  cl=$(tr '\0' ' ' 2>/dev/null <"$d/cmdline") || continue
  if [[ $cl == *containerd-shim*"$STATE/"* ]]; then kill -9 "${d#/proc/}" 2>/dev/null || true; fi
done
# 4. Mounts under the state dir (pod volumes, overlay snapshots, netns), deepest first.
for ((i = 0; i < 3; i++)); do
  mapfile -t ms < <(awk -v s="$STATE/" 'index($2, s) == 1 {print $2}' /proc/mounts | sort -r)
  ((${#ms[@]} == 0)) && break
  for m in "${ms[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
done
# 5. Host networking and kernel state.
[[ -x $B/kube-proxy ]] && "$B/kube-proxy" --cleanup >/dev/null 2>&1 || true
"$E2E_DIR/net.sh" down
for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods*; do
  [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
done
# The kubelet links container logs into /var/log/containers; drop links into our state dir.
for l in /var/log/containers/*; do
  [[ -L $l && $(readlink "$l") == "$STATE/"* ]] && rm -f "$l"
done
log "stopped"

# 6. Keep the logs, drop the rest.
mkdir -p "$STATE/logs"; cp "$RUN"/*.log "$STATE/logs/" 2>/dev/null || true
if [[ -z ${E2E_KEEP_STATE:-} ]]; then
  find "$STATE" -mindepth 1 -maxdepth 1 ! -name logs ! -name baseline ! -name run -exec rm -rf {} +
  rm -f "$RUN"/*.log
fi
rc=0; "$E2E_DIR/check-clean.sh" check || rc=$?
rm -f "$RUN/pids.all"
log "down in $(( $(date +%s) - ts0 ))s"
exit $rc
