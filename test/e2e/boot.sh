#!/usr/bin/env bash
# The bootstrap e2e path (issue 26), on a cluster brought up empty
# (E2E_EMPTY=1 up.sh: Kubernetes, CoreDNS, a storage class, the test
# platform's Git repository served to pods as GIT_POD_URL, nothing of Argo):
#   1. charts   mkcharts builds the four charts from the components' Go
#               modules (and argo-workflows 4.0.7-broken) and serves them on
#               http://127.0.0.1:8879
#   2. preflight `deployctl preflight` on the empty cluster: what is missing
#   3. site.yml the generated bootstrap/ with Debian's ansible (kubernetes.core
#               from the package) and the real helm, no token yet: the four
#               Helm roles, the handoff stops at its token check
#   4. token    the deployctl account's API token from the Argo CD now running,
#               into a vault-encrypted vars file, as the README says
#   5. site.yml again with the vault file: no Helm role changes; the handoff
#               applies the orchestration, writes the token Secret and the CA
#               Secret (spec.argocd.caSecret, from argocd-server's own
#               certificate) and submits the deploy
#   6. site.yml again while that deploy runs, the four Helm roles marked
#               done for the run (they take longer than the deploy's first
#               minute): no task changes anything, no second deploy (the
#               handoff follows the running one)
#   7. deploy   the deploy the handoff submitted Succeeds, every app Healthy
#               and Synced; its time is printed
#   8. site.yml again: no task changes anything; the handoff submits nothing
#               (the last deploy of this spec Succeeded, all apps Healthy)
#   9. events   Phase 3: test/e2e/events.sh, when that file exists, with W,
#               L, GEN, BS, PLATFORM (and E2E_PLATFORM), VAULT_FILE and
#               VAULT_PASS_FILE exported
#  10. rollback argo-workflows pinned to 4.0.7-broken (an image tag no image
#               has): that role ends rolled_back to 4.0.7, the playbook fails,
#               no other release changes
# Prints each step's time and each role's RESULT; the transcripts are in
# $STATE/boot/logs, copied to $STATE/logs/boot (kept by down.sh) at the end,
# with diag.txt (Workflows, step pods' and Argo CD's logs) after a failure. Exits non-zero on the first step that does not do what
# it should.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ts0=$(date +%s); export ts0
[[ $E2E_VERSIONS == newest ]] || die "the bootstrap path runs on the newest set"
B=$(tools_bin); BOOT=$("$E2E_DIR/build-boot.sh" | tail -1)
export PATH=$REPO_ROOT/bin:$BOOT:$B:$PATH
W=$STATE/boot; L=$W/logs; mkdir -p "$W" "$L"
REPO=http://127.0.0.1:8879
pf_pid=
# diagnose: what a failed step needs (Workflows, the step pods' logs, Argo
# CD's, events) into $L/diag.txt; the failed pods' last lines on stderr.
diagnose() {
  log "   diagnostics in $STATE/logs/boot/diag.txt"
  {
    kubectl get pods -A -o wide
    kubectl -n argo get workflows -o yaml
    for p in $(kubectl -n argo get pods -l workflows.argoproj.io/workflow -o name); do
      echo "== $p"; kubectl -n argo logs "$p" --all-containers --prefix --tail=100
    done
    for d in deploy/argocd-server deploy/argocd-repo-server statefulset/argocd-application-controller; do
      echo "== argocd $d"; kubectl -n argocd logs "$d" --tail=100
    done
    kubectl get events -A --sort-by=.lastTimestamp | tail -80
  } >"$L/diag.txt" 2>&1
  for p in $(kubectl -n argo get pods -l workflows.argoproj.io/workflow --field-selector=status.phase=Failed -o name 2>/dev/null | head -3); do
    log "   $p:"; kubectl -n argo logs "$p" -c main --tail=15 2>&1 | sed 's/^/   | /' >&2
  done
}
cleanup() {
  local rc=$?
  if ((rc != 0)) && kubectl get --raw /readyz >/dev/null 2>&1; then diagnose || true; fi
  [[ -n $pf_pid ]] && kill "$pf_pid" 2>/dev/null || true
  stop_pidfile "$RUN/chart-repo.pid"
  # down.sh keeps $STATE/logs only
  rm -rf "$STATE/logs/boot"; cp -r "$L" "$STATE/logs/boot" 2>/dev/null || true
}
trap cleanup EXIT
step() { log "== $*"; t_step=$(date +%s); }
took() { log "   $1 in $(( $(date +%s) - t_step ))s"; echo "$1 $(( $(date +%s) - t_step ))s" >>"$W/times"; }
: >"$W/times"

# results LOG: each role's RESULT line, the tasks that changed something and
# the recap of an ansible-playbook transcript.
results() {
  python3 - "$1" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
changed = re.findall(r'TASK \[([^\]]+)\][^\n]*\n(?:[^\n]*\n)*?changed: ', text)
tasks = re.split(r'\nTASK \[', text)
ch = []
for t in tasks[1:]:
    name = t.split(']', 1)[0]
    body = t.split('\n', 1)[1] if '\n' in t else ''
    if re.search(r'^changed: ', body, re.M):
        ch.append(name)
print(f"  CHANGED {len(ch)} task(s): " + "; ".join(ch))
for m in re.finditer(r'TASK \[([^\]]+) : Result \| Report the outcome\][^\n]*\n(?:ok|changed): \[localhost\] => (\{.*?\n\})', text, re.S):
    try:
        msg = json.loads(m.group(2))["msg"]
        extra = f"chart={msg['chart']} rev={msg['revision']}" if 'chart' in msg else f"workflow={msg.get('workflow')} decision={msg.get('decision')}"
        print(f"  RESULT {msg['role']:15} {msg['status']:12} {extra} {msg['duration_seconds']}s {msg['error']}")
        if msg.get('reason'):
            print(f"         {msg['role']} reason: {msg['reason']}")
        if msg.get('ca_secret'):
            print(f"         {msg['role']} CA Secret: {msg['ca_secret']}")
    except Exception as e:
        print("  RESULT (unparsed)", m.group(1), e)
rec = re.search(r'PLAY RECAP \*+\n(.*)', text)
print("  RECAP", rec.group(1).strip() if rec else "(none)")
PY
}

# --- 1. charts
step "1. charts from the modules' release manifests"
GOMODCACHE=$(modgo "$ACD_DIR" env GOMODCACHE)
modgo "$TOOLS_DIR/boot" build -trimpath -o "$W/mkcharts" ./cmd/mkcharts
aev=$(gomod_version github.com/argoproj/argo-events "$TOOLS_DIR/boot-events/go.mod")
ss=$(gomod_version github.com/bitnami-labs/sealed-secrets "$TOOLS_DIR/boot-events/go.mod")
nats=$(gomod_version github.com/nats-io/nats-server/v2 "$TOOLS_DIR/boot/go.mod")
modgo "$TOOLS_DIR/boot-events" mod download github.com/argoproj/argo-events github.com/bitnami-labs/sealed-secrets
rm -rf "$W/charts"
"$W/mkcharts" build -o "$W/charts" -url "$REPO" -broken argo-workflows -nats-image "local.test/nats:$nats" \
  -argo-cd "$GOMODCACHE/github.com/argoproj/argo-cd/v3@$(acd_version)" \
  -argo-workflows "$GOMODCACHE/$AWF_MODULE@$(awf_version)" \
  -argo-events "$GOMODCACHE/github.com/argoproj/argo-events@$aev" \
  -sealed-secrets "$GOMODCACHE/github.com/bitnami-labs/sealed-secrets@$ss" | tee "$L/charts.txt" >&2
start chart-repo "$W/mkcharts" serve -dir "$W/charts" -addr 127.0.0.1:8879
waitfor "curl -sf $REPO/index.yaml" 20
ver() { awk -v c="$1" '$1 == c && $2 !~ /-broken$/ {print $2; exit}' "$L/charts.txt"; }
took charts

# --- the platform: the e2e test platform with spec.bootstrap on those charts
# (its apps' Git repository as pods reach it: Argo CD runs as pods here)
sed "s|git://127.0.0.1:$GIT_PORT/platform.git|$GIT_POD_URL|" "$E2E_DIR/testdata/platform.yaml" >"$W/platform.yaml"
grep -q "$GIT_POD_URL" "$W/platform.yaml" || die "the test platform's repoURL is not git://127.0.0.1:$GIT_PORT/platform.git"
cat >>"$W/platform.yaml" <<EOF
  bootstrap:
    charts:
      argocd: {repo: "$REPO", chart: argo-cd, version: "$(ver argo-cd)"}
      argoWorkflows: {repo: "$REPO", chart: argo-workflows, version: "$(ver argo-workflows)"}
      argoEvents: {repo: "$REPO", chart: argo-events, version: "$(ver argo-events)"}
      sealedSecrets: {repo: "$REPO", chart: sealed-secrets, version: "$(ver sealed-secrets)"}
EOF
rm -rf "$W/gen"; deployctl generate "$W/platform.yaml" -o "$W/gen" >&2
BS=$W/gen/bootstrap

# --- 2. preflight on the empty cluster
step "2. deployctl preflight on the empty cluster"
mkdir -p "$W/config"; cp "$W/platform.yaml" "$W/config/dag.yaml"
printf 'name: e2e\ndomain: e2e.test\ngitRepository: %s\ngitRevision: main\n' "$GIT_POD_URL" >"$W/config/environment.yaml"
rc=0; KUBECONFIG_PATH=$KUBECONFIG ENVIRONMENT=e2e CONFIG_DIR=$W/config REPORT_DIR=$W deployctl preflight >"$L/preflight.txt" 2>&1 || rc=$?
log "   preflight exit $rc"
grep -E '^  (preflight|    (pass|warn|fail|skip) )' "$L/preflight.txt" | sed 's/^/   | /' >&2 || true
if kubectl get namespace argocd >/dev/null 2>&1; then
  log "   (not an empty cluster: a second boot.sh on the same cluster; preflight shown, not judged)"
else
((rc != 0)) || die "preflight passed on a cluster without Argo"
grep -qE '^    fail argo-cd ' "$L/preflight.txt" && grep -qE '^    fail argo-workflows ' "$L/preflight.txt" ||
  die "preflight did not report Argo CD and Argo Workflows missing: $L/preflight.txt"
fi
took preflight

# --- 3. site.yml, no token yet
cd "$BS"
step "3. ansible-playbook site.yml (no token yet)"
ansible-galaxy collection list 2>/dev/null | grep -E '^(kubernetes\.core|community\.general|ansible\.posix|ansible\.utils) ' >"$L/collections.txt" || true
log "   collections (Debian's ansible; no collection server here): $(tr -s ' \n' ' ' <"$L/collections.txt")"
export ANSIBLE_FORCE_COLOR=0 ANSIBLE_NOCOLOR=1
rc=0; ansible-playbook site.yml >"$L/site-1.txt" 2>&1 || rc=$?
results "$L/site-1.txt" | tee "$L/site-1.results" >&2
took site-1
grep -q 'RESULT argocd  *success' "$L/site-1.results" || die "argocd did not succeed: $L/site-1.txt"

# --- 4. the token the handoff needs, from the Argo CD the run installed
step "4. the deployctl account's API token, into a vault-encrypted file"
kubectl -n argocd port-forward svc/argocd-server 18443:443 >"$L/port-forward.log" 2>&1 &
pf_pid=$!
kubectl -n argocd get secret argocd-secret -o jsonpath='{.data.tls\.crt}' | base64 -d >"$W/argocd.crt"
CURL=(curl -sf --cacert "$W/argocd.crt" --resolve localhost:18443:127.0.0.1 -H 'Content-Type: application/json')
waitfor "${CURL[*]} https://localhost:18443/healthz" 60
pw=$(kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath='{.data.password}' | base64 -d)
sess=$("${CURL[@]}" https://localhost:18443/api/v1/session -d "{\"username\":\"admin\",\"password\":\"$pw\"}" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
tok=$("${CURL[@]}" -X POST -H "Authorization: Bearer $sess" https://localhost:18443/api/v1/account/deployctl/token -d '{}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
[[ -n $tok ]] || die "no token for the deployctl account"
( umask 077
  head -c 32 /dev/urandom | base64 >"$W/vault-pass"
  printf 'vault_deployctl_argocd_token: "%s"\n' "$tok" >"$W/vault.yml" )
ansible-vault encrypt --vault-password-file "$W/vault-pass" "$W/vault.yml" >/dev/null 2>&1
unset pw sess tok
took token
VAULT=(--vault-password-file "$W/vault-pass" -e "@$W/vault.yml")

# --- 5. site.yml with the token
step "5. ansible-playbook site.yml with the vault file"
rc=0; ansible-playbook site.yml "${VAULT[@]}" >"$L/site-2.txt" 2>&1 || rc=$?
results "$L/site-2.txt" | tee "$L/site-2.results" >&2
log "   exit $rc"
took site-2
for r in argocd argo-workflows argo-events sealed-secrets gitops-handoff; do
  grep -qE "RESULT $r +success " "$L/site-2.results" || die "$r did not succeed with the token: $L/site-2.txt"
done
grep -qE 'RESULT gitops-handoff .* decision=submit ' "$L/site-2.results" &&
  grep -q 'gitops-handoff : Apply | Submit the platform deploy workflow' "$L/site-2.results" || die "the handoff submitted no deploy: $L/site-2.txt"
grep -q 'gitops-handoff CA Secret: argo/argocd-ca from ' "$L/site-2.results" || die "the handoff reports no CA Secret: $L/site-2.txt"
DEPLOY=$(sed -nE 's|^  RESULT gitops-handoff .* workflow=argo/([^ ]+) .*|\1|p' "$L/site-2.results")
[[ -n $DEPLOY ]] || die "no deploy workflow in the handoff's RESULT"
[[ $(kubectl -n argo get secret argocd-ca -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}') == deployctl ]] ||
  die "argo/argocd-ca is not labelled as deployctl's"
deploys() { kubectl -n argo get workflows -l deployctl.dev/platform=e2e,deployctl.dev/action=deploy --no-headers 2>/dev/null | wc -l; }

# rerun N DECISION ROLES [ARGS...]: site.yml again (logs/site-N.*) with
# ARGS: it must exit 0 and change nothing, each of ROLES succeed, the
# handoff decide DECISION (a regex) about $DEPLOY, and $DEPLOY stay the
# platform's one deploy.
rerun() {
  local n=$1 decision=$2 roles=$3 rc=0 r; shift 3
  ansible-playbook site.yml "${VAULT[@]}" "$@" >"$L/site-$n.txt" 2>&1 || rc=$?
  results "$L/site-$n.txt" | tee "$L/site-$n.results" >&2
  log "   exit $rc; deploy workflows: $(deploys)"
  took "site-$n"
  ((rc == 0)) || die "the re-run failed: $L/site-$n.txt"
  grep -qE '^  CHANGED 0 task\(s\)' "$L/site-$n.results" || die "the re-run changed something: $(grep CHANGED "$L/site-$n.results")"
  for r in $roles; do
    grep -qE "RESULT $r +success " "$L/site-$n.results" || die "$r did not succeed on the re-run: $L/site-$n.txt"
  done
  grep -qE "RESULT gitops-handoff .* workflow=argo/$DEPLOY decision=($decision) " "$L/site-$n.results" ||
    die "the handoff did not decide $decision about $DEPLOY: $(grep -A1 'RESULT gitops-handoff' "$L/site-$n.results")"
  [[ $(deploys) == 1 ]] || die "$(deploys) deploy workflows after the re-run, want 1 ($DEPLOY)"
}

# --- 6. the handoff again while the deploy runs: nothing changes, no second
# deploy. A whole site.yml spends ~60 s in the Helm roles, longer than this
# deploy's first minute, so here they are marked done for this run (the
# mechanism that keeps a role from running twice in one play) and the
# handoff looks at once; up-to-date is accepted if the deploy still won.
step "6. the handoff again (site.yml, Helm roles marked done), the deploy $DEPLOY $(kubectl -n argo get workflow "$DEPLOY" -o jsonpath='{.status.phase}')"
rerun 3 'follow|up-to-date' gitops-handoff -e argocd_status=success -e argo_workflows_status=success \
  -e argo_events_status=success -e sealed_secrets_status=success
grep -q 'decision=follow ' "$L/site-3.results" || log "   (the deploy finished before the handoff looked: up-to-date, not follow)"

# --- 7. the deploy the handoff submitted
step "7. the deploy $DEPLOY: Succeeded, every app Healthy and Synced"
phase=
for ((i = 0; i < 900; i += 5)); do
  phase=$(kubectl -n argo get workflow "$DEPLOY" -o jsonpath='{.status.phase}' 2>/dev/null) || phase=
  [[ $phase == Succeeded || $phase == Failed || $phase == Error ]] && break
  sleep 5
done
kubectl -n argo get workflow "$DEPLOY" -o json >"$L/deploy.json"
python3 - "$L/deploy.json" <<'EOF' >&2
import json, sys
from datetime import datetime
w = json.load(open(sys.argv[1])); s = w.get("status", {})
t = lambda v: datetime.strptime(v, "%Y-%m-%dT%H:%M:%SZ") if v else None
start, end = t(s.get("startedAt")), t(s.get("finishedAt"))
print(f"   deploy {w['metadata']['name']}: {s.get('phase')} in {(end - start).total_seconds():.0f}s" if start and end else f"   deploy: {s.get('phase')}")
for n in sorted(s.get("nodes", {}).values(), key=lambda n: n.get("startedAt") or ""):
    if n.get("type") == "Pod" and n.get("phase") != "Succeeded":
        print(f"   | {n.get('displayName')}: {n.get('phase')} {n.get('message', '')}")
EOF
kubectl get applications.argoproj.io -A -l deployctl.dev/platform=e2e --no-headers \
  -o custom-columns=NS:.metadata.namespace,NAME:.metadata.name,SYNC:.status.sync.status,HEALTH:.status.health.status | tee "$L/apps.txt" >&2
[[ $phase == Succeeded ]] || die "the deploy $DEPLOY ended ${phase:-unfinished}: $L/deploy.json"
[[ $(wc -l <"$L/apps.txt") == 9 ]] && ! awk '$3 != "Synced" || $4 != "Healthy"' "$L/apps.txt" | grep -q . ||
  die "not every one of the 9 apps is Healthy and Synced: $L/apps.txt"
took deploy

# --- 8. again after the deploy: nothing to do
step "8. ansible-playbook site.yml again, the deploy done"
rerun 4 up-to-date "argocd argo-workflows argo-events sealed-secrets gitops-handoff"

# --- 9. Phase 3 (test/e2e/events.sh, another helper's): run when present
if [[ -f $E2E_DIR/events.sh ]]; then
  step "9. Phase 3: events.sh"
  GEN=$W/gen PLATFORM=e2e E2E_PLATFORM=e2e VAULT_FILE=$W/vault.yml VAULT_PASS_FILE=$W/vault-pass
  export W L GEN BS PLATFORM E2E_PLATFORM VAULT_FILE VAULT_PASS_FILE
  bash "$E2E_DIR/events.sh"
  took events
else
  log "== 9. Phase 3: no test/e2e/events.sh here, skipped"
fi

# --- 10. rollback: argo-workflows pinned to a chart whose install never becomes Ready
step "10. ansible-playbook site.yml with argo-workflows 4.0.7-broken"
helm list -A >"$L/helm-before.txt"
rc=0; ansible-playbook site.yml "${VAULT[@]}" -e argo_workflows_chart_version=4.0.7-broken \
  -e deployctl_helm_timeout=2m -e deployctl_validate_timeout=60 -e deployctl_validate_retries=2 >"$L/site-5.txt" 2>&1 || rc=$?
results "$L/site-5.txt" | tee "$L/site-5.results" >&2
helm list -A >"$L/helm-after.txt"
log "   exit $rc (want non-zero); helm releases before and after:"
paste -d'|' "$L/helm-before.txt" "$L/helm-after.txt" | cut -c1-220 >&2
((rc != 0)) || die "site.yml succeeded with a chart that never gets Ready"
grep -qE 'RESULT argo-workflows +rolled_back +chart=argo-workflows-4.0.7 ' "$L/site-5.results" ||
  die "argo-workflows did not report rolled_back to 4.0.7: $L/site-5.txt"
diff <(awk 'NR > 1 && $1 != "argo-workflows" {print $1, $3, $8}' "$L/helm-before.txt") \
  <(awk 'NR > 1 && $1 != "argo-workflows" {print $1, $3, $8}' "$L/helm-after.txt") >&2 || die "another release changed during the rollback run"
awk '$1 == "argo-workflows" {print $9}' "$L/helm-after.txt" | grep -qx 'argo-workflows-4.0.7' || die "argo-workflows is not back on 4.0.7"
took rollback
log "boot path done: $(tr '\n' ' ' <"$W/times")"
