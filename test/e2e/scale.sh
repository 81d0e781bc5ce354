#!/usr/bin/env bash
# make e2e-scale N=100,300 (issue 24): deploy and tear down the synthetic
# platform (scalegen_test.go) of each N in plugin and pod mode, measured
# (TestScale, scale_test.go). Uses the running cluster, or brings one up
# and down around the run. Run it inside the cluster lock like any e2e use.
#   MODES=plugin,pod  DEPTH=10  FANIN=2  PARALLELISM=50  KIND=configmap|pod
#   INLINE=1: submit the Workflows with the template's spec inline (scale_test.go)
# The table lands in $STATE/logs/scale-summary.txt. Not part of `make e2e`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
[[ -n ${N:-} ]] || die "usage: make e2e-scale N=100,300 [MODES=plugin,pod] [DEPTH=10] [FANIN=2] [PARALLELISM=50] [KIND=configmap|pod]"
up=0
for f in "$RUN"/*.pid; do
  [[ -f $f ]] && kill -0 "$(cat "$f")" 2>/dev/null && up=1
done
if (( ! up )); then
  trap '"$E2E_DIR/down.sh"' EXIT
  "$E2E_DIR/up.sh"
fi
mkdir -p "$STATE/logs"
cd "$REPO_ROOT"
E2E_STATE_DIR=$STATE E2E_SCALE_N=$N E2E_SCALE_MODES=${MODES:-} E2E_SCALE_DEPTH=${DEPTH:-} E2E_SCALE_FANIN=${FANIN:-} \
  E2E_SCALE_PARALLELISM=${PARALLELISM:-} E2E_SCALE_KIND=${KIND:-} E2E_SCALE_INLINE=${INLINE:-} \
  go test -tags e2e -count=1 -timeout 180m -run '^TestScale$' -v ./test/e2e/ 2>&1 | tee "$STATE/logs/scale.log"
