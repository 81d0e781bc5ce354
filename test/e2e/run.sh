#!/usr/bin/env bash
# make e2e: bring the cluster up, run the issue-5 scenario (go test -tags e2e),
# and always bring it down again (with the leak check). Exit status: the
# scenario's, or down's if the scenario passed but something was left behind.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ts0=$(date +%s); export ts0

down_rc=0
cleanup() { "$E2E_DIR/down.sh" || down_rc=$?; }
trap cleanup EXIT
t=$(date +%s); "$E2E_DIR/up.sh"; up_s=$(( $(date +%s) - t ))
rc=0
mkdir -p "$STATE/logs"; rm -f "$STATE/logs/scenario-summary.txt"; t=$(date +%s)
(cd "$REPO_ROOT" && E2E_STATE_DIR=$STATE go test -tags e2e -count=1 -timeout 45m -v ./test/e2e/ 2>&1 | tee "$STATE/logs/scenario.log") || rc=$?
scen_s=$(( $(date +%s) - t ))
trap - EXIT
t=$(date +%s); cleanup; down_s=$(( $(date +%s) - t ))
[[ -f $STATE/logs/scenario-summary.txt ]] && cat "$STATE/logs/scenario-summary.txt"
log "e2e: up ${up_s}s (tools build included), scenario ${scen_s}s, down ${down_s}s"
(( rc != 0 )) && exit $rc
exit $down_rc
