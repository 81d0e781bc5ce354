#!/usr/bin/env bash
# Restart one harness process (the scenario's fault injection): stop it by its
# pidfile, start it again with the command line recorded by start().
#   restart.sh argocd-server|workflow-controller|...
set -euo pipefail
source "$(dirname "$0")/lib.sh"
name=${1:?usage: restart.sh NAME}
[[ -f $RUN/$name.cmd ]] || die "no recorded command for $name"
eval "cmd=($(cat "$RUN/$name.cmd"))"
B=$(tools_bin); export PATH=$B:$PATH
# supervise.sh takes the same lock: it must not start the process again
# between the stop and the start.
exec 9>"$RUN/supervise.lock"
flock 9
stop_pidfile "$RUN/$name.pid"
start "$name" "${cmd[@]}"
flock -u 9
log "restarted $name (pid $(cat "$RUN/$name.pid"))"
