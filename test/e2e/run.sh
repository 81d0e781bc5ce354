#!/usr/bin/env bash
# make e2e: for each version set (lib.sh; E2E_VERSIONS picks one, default
# every set in E2E_SETS), bring the cluster up, run the issue-5 scenario
# (go test -tags e2e), and always bring it down again (with the leak check).
# E2E_VERSIONS may list several sets ("newest oldest"), run in that order.
# Prints each set's summary table under its versions. Exit status: the first
# failing scenario's, or down's if a scenario passed but something was left.
set -euo pipefail
sets=${E2E_VERSIONS:-}; unset E2E_VERSIONS
source "$(dirname "$0")/lib.sh"
ts0=$(date +%s); export ts0
[[ -n $sets ]] || sets=$E2E_SETS

final=0
for set in $sets; do
  export E2E_VERSIONS=$set
  label=$(E2E_VERSIONS=$set bash -c "source '$E2E_DIR/lib.sh' && versions_label")
  log "=== e2e on $label"
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
  sum=$STATE/logs/scenario-summary-$set.txt
  { echo "versions: $label"
    cat "$STATE/logs/scenario-summary.txt" 2>/dev/null || echo "(no summary: the scenario did not finish)"
    echo "e2e $set: up ${up_s}s (tools build included), scenario ${scen_s}s, down ${down_s}s"
  } >"$sum"
  cp "$STATE/logs/scenario.log" "$STATE/logs/scenario-$set.log" 2>/dev/null || true
  (( final == 0 && rc != 0 )) && final=$rc
  (( final == 0 && down_rc != 0 )) && final=$down_rc
done
for set in $sets; do echo; cat "$STATE/logs/scenario-summary-$set.txt"; done
log "e2e: $(( $(date +%s) - ts0 ))s for: $sets"
exit $final
