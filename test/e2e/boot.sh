#!/usr/bin/env bash
# The bootstrap e2e path (issue 26), on a cluster brought up empty
# (E2E_EMPTY=1 up.sh: Kubernetes, CoreDNS, a storage class, nothing of Argo):
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
#               applies the orchestration and submits the deploy (which fails:
#               no caSecret, no Git served to pods; test/e2e/README.md)
#   6. site.yml again: nothing changes but a new deploy when none runs
#   7. rollback argo-workflows pinned to 4.0.7-broken (an image tag no image
#               has): that role ends rolled_back, the playbook fails, no
#               other release changes
# Prints each step's time and each role's RESULT; the transcripts are in
# $STATE/boot/logs. Exits non-zero on the first step that does not do what
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
cleanup() {
  [[ -n $pf_pid ]] && kill "$pf_pid" 2>/dev/null || true
  stop_pidfile "$RUN/chart-repo.pid"
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
        extra = f"chart={msg['chart']} rev={msg['revision']}" if 'chart' in msg else f"workflow={msg.get('workflow')}"
        print(f"  RESULT {msg['role']:15} {msg['status']:12} {extra} {msg['duration_seconds']}s {msg['error']}")
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
cp "$E2E_DIR/testdata/platform.yaml" "$W/platform.yaml"
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
printf 'name: e2e\ndomain: e2e.test\ngitRepository: git://127.0.0.1:%s/platform.git\ngitRevision: main\n' "$GIT_PORT" >"$W/config/environment.yaml"
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
# The four Helm roles must succeed and the handoff submit the deploy. The
# deploy itself does not succeed here yet (its steps mount spec.argocd.caSecret,
# which nothing on a bootstrapped cluster creates, and the apps' Git
# repository is not served to pods), so the handoff's VALIDATE passes or fails
# by whether it sees the run before it fails: reported, not judged.
for r in argocd argo-workflows argo-events sealed-secrets; do
  grep -qE "RESULT $r +success " "$L/site-2.results" || die "$r did not succeed with the token: $L/site-2.txt"
done
grep -q 'gitops-handoff : Apply | Submit the platform deploy workflow' "$L/site-2.results" || die "the handoff submitted no deploy: $L/site-2.txt"
kubectl -n argo get workflows -l deployctl.dev/action=deploy -o custom-columns=NAME:.metadata.name,PHASE:.status.phase --no-headers >&2 || true

# --- 6. again: nothing changes, no second deploy while one runs
step "6. ansible-playbook site.yml again"
rc=0; ansible-playbook site.yml "${VAULT[@]}" >"$L/site-3.txt" 2>&1 || rc=$?
results "$L/site-3.txt" | tee "$L/site-3.results" >&2
log "   exit $rc; deploy workflows: $(kubectl -n argo get workflows -l deployctl.dev/action=deploy --no-headers 2>/dev/null | wc -l)"
took site-3
grep -qE '^  CHANGED [0-9]+ task\(s\): ?$|^  CHANGED 1 task\(s\): gitops-handoff : Apply \| Submit the platform deploy workflow$' "$L/site-3.results" ||
  die "the re-run changed something beyond submitting a new deploy: $(grep CHANGED "$L/site-3.results")"

# --- 7. rollback: argo-workflows pinned to a chart whose install never becomes Ready
step "7. ansible-playbook site.yml with argo-workflows 4.0.7-broken"
helm list -A >"$L/helm-before.txt"
rc=0; ansible-playbook site.yml "${VAULT[@]}" -e argo_workflows_chart_version=4.0.7-broken \
  -e deployctl_helm_timeout=2m -e deployctl_validate_timeout=60 -e deployctl_validate_retries=2 >"$L/site-4.txt" 2>&1 || rc=$?
results "$L/site-4.txt" | tee "$L/site-4.results" >&2
helm list -A >"$L/helm-after.txt"
log "   exit $rc (want non-zero); helm releases before and after:"
paste -d'|' "$L/helm-before.txt" "$L/helm-after.txt" | cut -c1-220 >&2
((rc != 0)) || die "site.yml succeeded with a chart that never gets Ready"
grep -qE 'RESULT argo-workflows +rolled_back ' "$L/site-4.results" || die "argo-workflows did not report rolled_back: $L/site-4.txt"
diff <(awk 'NR > 1 && $1 != "argo-workflows" {print $1, $3, $8}' "$L/helm-before.txt") \
  <(awk 'NR > 1 && $1 != "argo-workflows" {print $1, $3, $8}' "$L/helm-after.txt") >&2 || die "another release changed during the rollback run"
awk '$1 == "argo-workflows" {print $9}' "$L/helm-after.txt" | grep -qx 'argo-workflows-4.0.7' || die "argo-workflows is not back on 4.0.7"
took rollback
log "boot path done: $(tr '\n' ' ' <"$W/times")"
