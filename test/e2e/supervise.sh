#!/usr/bin/env bash
# What a Deployment or StatefulSet does for Argo's pods, for the harness's
# host processes (issue 24): restart one that died. Started by addons.sh as
# the process `supervisor`; every second it checks the names given (their
# pidfiles, run/NAME.pid) and starts a dead one again with its recorded
# command line (run/NAME.cmd, as restart.sh does). A restart is recorded,
# never hidden: one line in run/restarts.log (the scenario reports them per
# step and in its summary):
#   UNIX-TIME NAME OLD-PID NEW-PID REASON
# REASON is the first "panic:" or "fatal error:" line of the process's log
# since it was started, else "exited". A name whose pidfile is gone was
# stopped on purpose (stop_pidfile removes it): left alone. A stopped process
# (SIGSTOP, step 9) is alive. restart.sh and this loop take run/supervise.lock
# around a check or a restart, so a deliberate restart is never doubled.
#   supervise.sh NAME...
set -euo pipefail
source "$(dirname "$0")/lib.sh"
(($# > 0)) || die "usage: supervise.sh NAME..."
B=$(tools_bin); export PATH=$B:$PATH
exec 9>"$RUN/supervise.lock"
declare -A since # NAME -> log size when its current process started
for n in "$@"; do since[$n]=$(stat -c %s "$RUN/$n.log" 2>/dev/null || echo 0); done
log "supervising: $*"
while sleep 1; do
  flock 9
  for n in "$@"; do
    f=$RUN/$n.pid
    [[ -f $f && -f $RUN/$n.cmd ]] || continue
    p=$(cat "$f" 2>/dev/null) || continue
    [[ -n $p ]] || continue
    if kill -0 "$p" 2>/dev/null; then continue; fi
    # Dead, and nobody stopped it: the reason from its log, then start it again.
    reason=$(tail -c +"$((${since[$n]:-0} + 1))" "$RUN/$n.log" 2>/dev/null | grep -m1 -E '^(panic: |fatal error: )' | cut -c1-200 || true)
    since[$n]=$(stat -c %s "$RUN/$n.log" 2>/dev/null || echo 0)
    eval "cmd=($(cat "$RUN/$n.cmd"))"
    start "$n" "${cmd[@]}"
    echo "$(date +%s) $n $p $(cat "$f") ${reason:-exited}" >>"$RUN/restarts.log"
    log "restarted $n (pid $p died: ${reason:-exited}; new pid $(cat "$f"))"
  done
  flock -u 9
done
