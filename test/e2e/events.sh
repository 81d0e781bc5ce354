#!/usr/bin/env bash
# Phase 3 on the bootstrapped cluster (issue 26): Argo Events triggers the
# deploy. boot.sh runs it after the handoff (Argo CD, Argo Workflows and
# Argo Events as pods; rbac/, the templates, events/ and the Secrets
# applied); by hand: test/e2e/events.sh on a cluster boot.sh bootstrapped.
#   0. the webhook token: the Secret of the EventSource's authSecret; when
#      the handoff did not write it (no vault_deployctl_webhook_token in
#      boot.sh's vault file), site.yml again with a second vault file that
#      holds one, as a user adding it later would
#   1. the EventSource's and the Sensor's pods Ready, no run of the
#      platform unfinished, kubectl port-forward to the EventSource Service
#   2. refused: no token, a wrong one, another scheme, a body that is not
#      JSON, JSON without ref, another branch: no Workflow (HTTP status kept)
#   3. a commit pushed to the harness's Git repository and its push payload
#      POSTed with the token: exactly one deploy Workflow (trigger git-push)
#   4. while it runs: the push payload again and the manual endpoint: one
#      Workflow each, Pending on the platform's mutex, never running beside
#      another run (sampled every second, then checked on the nodes' start
#      and end times); what happens after is recorded
#   5. the validate CronWorkflow on `* * * * *` (applied server-side with
#      the handoff's field manager, restored after): it fires every minute
#      and never overlaps itself (concurrencyPolicy Forbid)
# Prints the events table (event -> HTTP status -> workflows created) into
# $STATE/boot/logs/events-table.txt; exits non-zero on the first violation.
# E2E_EVENTS_CRON_SECONDS (default 170) is how long the CronWorkflow is watched.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
W=$STATE/boot; L=$W/logs; E=$W/events
mkdir -p "$L" "$E"
P=${E2E_PLATFORM:-e2e}; NS=argo
ES=$P-git; SENSOR=$P-deploy; CRON=$P-validate
LPORT=${E2E_EVENTS_PORT:-18120}
CRON_SECONDS=${E2E_EVENTS_CRON_SECONDS:-170}
MANAGER=deployctl-bootstrap-$P
B=$(tools_bin)
export PATH=$REPO_ROOT/bin:$B:$PATH
pf_pid=
cron_patched=
sampler=
cleanup() {
  [[ -n $pf_pid ]] && kill "$pf_pid" 2>/dev/null || true
  [[ -n $sampler ]] && kill "$sampler" 2>/dev/null || true
  stop_pidfile "$RUN/chart-repo-events.pid"
  if [[ -n $cron_patched ]]; then
    kubectl apply --server-side --force-conflicts --field-manager="$MANAGER" -f "$W/gen/events/validate-cronworkflow.yaml" >/dev/null 2>&1 ||
      log "   could not restore the CronWorkflow's schedule"
  fi
}
trap cleanup EXIT
t_ev=$(date +%s)
TABLE=$L/events-table.txt
printf '| # | event | endpoint | Authorization | body | HTTP | workflows created |\n|---|---|---|---|---|---|---|\n' >"$TABLE"
fail() { log "VIOLATION: $*"; cat "$TABLE" >&2; die "events: $*"; }

# wfs: the platform's deploy and teardown Workflows, one line each:
# name trigger phase created started finished first-node-start message
wfs() {
  kubectl -n "$NS" get workflows -l "deployctl.dev/platform=$P" -o json | python3 -c '
import json, sys
for w in sorted(json.load(sys.stdin)["items"], key=lambda w: (w["metadata"]["creationTimestamp"], w["metadata"]["name"])):
    l, s = w["metadata"].get("labels", {}), w.get("status", {})
    if l.get("deployctl.dev/action") not in ("deploy", "teardown"):
        continue
    nodes = [n.get("startedAt") for n in s.get("nodes", {}).values() if n.get("startedAt")]
    msg = "_".join((s.get("message") or "-").split())[:120]
    print(w["metadata"]["name"], l.get("deployctl.dev/trigger", "-"), s.get("phase") or "Pending",
          w["metadata"]["creationTimestamp"], s.get("startedAt") or "-", s.get("finishedAt") or "-",
          min(nodes) if nodes else "-", msg)'
}
names() { wfs | awk '{print $1}' | sort; }
# samples.py: the samples files written below, a time line then one
# indented line per object: samples(path) yields (time, [fields of each]).
cat >"$E/samples.py" <<'PY'
def samples(path):
    when, cur = None, []
    for line in open(path):
        if not line.startswith("  "):
            if when:
                yield when, cur
            when, cur = line.strip(), []
        elif line.strip():
            cur.append(line.split())
    if when:
        yield when, cur
PY
export PYTHONPATH=$E

# --- 0. the webhook token
log "== events 0. the webhook token"
read -r SECRET KEY < <(kubectl -n "$NS" get eventsource "$ES" -o json | python3 -c '
import json, sys
a = json.load(sys.stdin)["spec"]["webhook"]["git"].get("authSecret") or {}
print(a.get("name", "-"), a.get("key", "-"))')
[[ $SECRET != - ]] || fail "EventSource $ES has no authSecret: its endpoints accept anyone"
if ! kubectl -n "$NS" get secret "$SECRET" >/dev/null 2>&1; then
  log "   Secret $NS/$SECRET absent: site.yml again with vault_deployctl_webhook_token in a second vault file"
  [[ -f $W/vault-pass && -f $W/vault.yml ]] || fail "no vault files of boot.sh in $W"
  # Run by hand after boot.sh: its helm and its chart repository are gone.
  export PATH=$("$E2E_DIR/build-boot.sh" | tail -1):$PATH
  if ! curl -sf http://127.0.0.1:8879/index.yaml >/dev/null; then
    start chart-repo-events "$W/mkcharts" serve -dir "$W/charts" -addr 127.0.0.1:8879
    waitfor "curl -sf http://127.0.0.1:8879/index.yaml" 20 || fail "no chart repository"
  fi
  ( umask 077
    printf 'vault_deployctl_webhook_token: "%s"\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$W/webhook-vault.yml" )
  ansible-vault encrypt --vault-password-file "$W/vault-pass" "$W/webhook-vault.yml" >/dev/null 2>&1
  rc=0; (cd "$W/gen/bootstrap" && ANSIBLE_FORCE_COLOR=0 ANSIBLE_NOCOLOR=1 ansible-playbook site.yml --vault-password-file "$W/vault-pass" \
    -e "@$W/vault.yml" -e "@$W/webhook-vault.yml") >"$L/site-webhook.txt" 2>&1 || rc=$?
  log "   site.yml exit $rc ($L/site-webhook.txt)"
  grep -q 'Apply | Ensure the webhook token Secret of the EventSource' "$L/site-webhook.txt" || fail "the handoff has no webhook Secret task"
  if grep -q "$(ansible-vault view --vault-password-file "$W/vault-pass" "$W/webhook-vault.yml" | sed 's/.*"\(.*\)"/\1/')" "$L/site-webhook.txt"; then
    fail "the webhook token reached ansible-playbook's output"
  fi
  # The run's outcome is the handoff's (its deploy); what counts here is
  # that it wrote the Secret.
  kubectl -n "$NS" get secret "$SECRET" >/dev/null 2>&1 || fail "site.yml with the webhook token wrote no Secret $NS/$SECRET: $L/site-webhook.txt"
fi
TOKEN=$(kubectl -n "$NS" get secret "$SECRET" -o jsonpath="{.data.${KEY//./\\.}}" | base64 -d)
[[ -n $TOKEN ]] || fail "Secret $NS/$SECRET has no key $KEY"
log "   Secret $NS/$SECRET key $KEY: ${#TOKEN} characters"

# --- 1. pods Ready, nothing of the platform running, the port-forward
log "== events 1. EventSource and Sensor Ready; no run of $P unfinished"
for sel in "eventsource-name=$ES" "sensor-name=$SENSOR"; do
  waitfor "kubectl -n $NS get pods -l $sel -o jsonpath='{.items[*].status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" 240 ||
    { kubectl -n "$NS" get pods -l "$sel" -o wide >&2; kubectl -n "$NS" describe pods -l "$sel" | tail -30 >&2; fail "no Ready pod for $sel"; }
done
waitfor "! kubectl -n $NS get workflows -l deployctl.dev/platform=$P,workflows.argoproj.io/completed!=true --no-headers 2>/dev/null | grep -q ." 900 ||
  fail "a run of $P is still unfinished after 15 min"
wfs | sed 's/^/   before: /' >&2
kubectl -n "$NS" port-forward "svc/$ES-eventsource-svc" "$LPORT:12000" >"$L/events-port-forward.log" 2>&1 &
pf_pid=$!
URL=http://127.0.0.1:$LPORT
waitfor "curl -sf $URL/health" 60 || fail "the EventSource does not answer on $URL/health"
log "   ready in $(( $(date +%s) - t_ev ))s"

# post N EVENT ENDPOINT AUTH BODY WANT_HTTP WANT_WFS [SETTLE]: one request,
# its status, and the deploy Workflows that appear after it (waits for
# WANT_WFS of them, then SETTLE s (5) more for any extra; a refused one is
# given 10 s to show none).
known=$(names)
post() {
  local n=$1 ev=$2 ep=$3 auth=$4 body=$5 want_http=$6 want_wfs=$7 settle=${8:-5} code hdr=() new i
  case $auth in
  none) ;;
  wrong) hdr=(-H "Authorization: Bearer not-the-token") ;;
  basic) hdr=(-H "Authorization: Basic $(printf 'e2e:%s' "$TOKEN" | base64 -w0)") ;;
  bearer) hdr=(-H "Authorization: Bearer $TOKEN") ;;
  esac
  code=$(curl -s -o "$E/$n.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -H 'X-Gitea-Event: push' "${hdr[@]}" \
    --data-binary "$body" "$URL$ep")
  for ((i = 0; i < 30; i++)); do
    new=$(comm -13 <(echo "$known") <(names) | grep . || true)
    (( $(grep -c . <<<"$new") >= want_wfs && want_wfs > 0 )) && break
    ((want_wfs == 0 && i >= 10)) && break
    sleep 1
  done
  ((want_wfs == 0)) || sleep "$settle"
  new=$(comm -13 <(echo "$known") <(names) | grep . || true)
  known=$(names)
  local count; count=$(grep -c . <<<"$new" || true)
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$ev" "$ep" "$auth" "$(cut -c1-40 <<<"$body")" "$code" \
    "$count${new:+ ($(tr '\n' ' ' <<<"$new" | sed 's/ $//'))}" >>"$TABLE"
  log "   $n $ev: HTTP $code ($(head -c 80 "$E/$n.out")), $count workflow(s) ${new:+$(tr '\n' ' ' <<<"$new")}"
  [[ $code == "$want_http" ]] || fail "$n $ev: HTTP $code, want $want_http"
  ((count == want_wfs)) || fail "$n $ev: $count workflow(s) created, want $want_wfs"
  LAST_NEW=$new
}

# --- 2. what must start nothing
log "== events 2. refused and filtered events"
G=$STATE/git/work
[[ -d $G ]] || "$E2E_DIR/gitrepo.sh" init
head_before=$("$E2E_DIR/gitrepo.sh" head)
push_body() { # REF AFTER
  printf '{"ref":"%s","before":"%s","after":"%s","repository":{"full_name":"e2e/platform","clone_url":"git://127.0.0.1:%s/platform.git"},"pusher":{"login":"e2e"},"commits":[{"id":"%s","message":"e2e events"}]}' \
    "$1" "$head_before" "$2" "$GIT_PORT" "$2"
}
valid=$(push_body refs/heads/main "$head_before")
post N1 "push, no Authorization" /push none "$valid" 401 0
post N2 "push, wrong token" /push wrong "$valid" 401 0
post N3 "push, Basic with the token" /push basic "$valid" 401 0
post N4 "manual, no Authorization" /push/manual none '{}' 401 0
post N5 "manual, wrong token" /push/manual wrong '{}' 401 0
post N6 "push, body not JSON" /push bearer 'ref=refs/heads/main&this is {not json' 400 0
post N7 "push, JSON without ref" /push bearer '{"after":"x","repository":{"full_name":"e2e/platform"}}' 200 0
post N8 "push, another branch" /push bearer "$(push_body refs/heads/feature "$head_before")" 200 0
post N9 "push, branch main-x (anchored filter)" /push bearer "$(push_body refs/heads/main-x "$head_before")" 200 0
post N10 "push, tag main" /push bearer "$(push_body refs/tags/main "$head_before")" 200 0
post N11 "manual, body not JSON" /push/manual bearer 'not json' 400 0
post N12 "push, JSON null" /push bearer 'null' 200 0

# --- 3. a push
log "== events 3. a commit pushed, its push payload POSTed"
export GIT_AUTHOR_NAME=e2e GIT_AUTHOR_EMAIL=e2e@deployctl.invalid GIT_COMMITTER_NAME=e2e GIT_COMMITTER_EMAIL=e2e@deployctl.invalid
date -u +%FT%TZ >"$G/e2e-events.txt"
git -C "$G" -c commit.gpgsign=false add e2e-events.txt
git -C "$G" -c commit.gpgsign=false commit -qm "e2e: Phase 3 push"
git -C "$G" push -q origin main
head_after=$("$E2E_DIR/gitrepo.sh" head)
log "   pushed $head_before -> $head_after"
# Sampled every second from here on; P2 and P3 follow P1 as soon as its
# Workflow exists (a deploy that fails fast still runs for seconds), and
# the total after them proves each event made exactly one.
(while :; do echo "$(date -u +%FT%TZ)"; wfs | sed 's/^/  /'; sleep 1; done) >"$E/samples.txt" 2>&1 &
sampler=$!
before_p=$known
post P1 "push of $head_after" /push bearer "$(push_body refs/heads/main "$head_after")" 200 1 0
first=$LAST_NEW
[[ $(kubectl -n "$NS" get workflow "$first" -o jsonpath='{.metadata.labels.deployctl\.dev/trigger}') == git-push ]] || fail "$first is not labelled trigger=git-push"
[[ $(kubectl -n "$NS" get workflow "$first" -o jsonpath='{.spec.workflowTemplateRef.name}') == "$P-deploy" ]] || fail "$first does not run $P-deploy"

# --- 4. more events while it runs
log "== events 4. the same push and the manual endpoint while $first runs"
phase_then=$(kubectl -n "$NS" get workflow "$first" -o jsonpath='{.status.phase}')
log "   $first is ${phase_then:-Pending}"
post P2 "push of $head_after, again" /push bearer "$(push_body refs/heads/main "$head_after")" 200 1 0
second=$LAST_NEW
post P3 "manual" /push/manual bearer '{"reason":"e2e"}' 200 1 0
third=$LAST_NEW
sleep 5
all=$(comm -13 <(echo "$before_p") <(names) | grep . || true)
printf '| P1-P3 | all three, 5 s after P3 | - | - | - | - | %s (%s) |\n' "$(grep -c . <<<"$all")" "$(tr '\n' ' ' <<<"$all" | sed 's/ $//')" >>"$TABLE"
[[ $(grep -c . <<<"$all") == 3 ]] || fail "P1-P3 made $(grep -c . <<<"$all") workflows, want 3: $all"
[[ $(kubectl -n "$NS" get workflow "$third" -o jsonpath='{.metadata.labels.deployctl\.dev/trigger}') == manual ]] || fail "$third is not labelled trigger=manual"
waitfor "! kubectl -n $NS get workflows -l deployctl.dev/platform=$P,workflows.argoproj.io/completed!=true --no-headers 2>/dev/null | grep -q ." 1500 ||
  { kill "$sampler"; fail "the queued runs did not finish within 25 min"; }
kill "$sampler" 2>/dev/null || true
wfs >"$E/runs.txt"
log "   runs (name trigger phase created started finished first-node message):"
sed 's/^/   | /' "$E/runs.txt" >&2
python3 - "$E/samples.txt" "$E/runs.txt" "$first" "$second" "$third" >"$E/overlap.txt" <<'PY' || { cat "$E/overlap.txt" >&2; fail "two runs of the platform ran at once"; }
import sys
samples_file, runs, ours = sys.argv[1], sys.argv[2], sys.argv[3:]
bad = []
from samples import samples
# 1. every sample: at most one run Running and not waiting for the lock
for when, cur in samples(samples_file):
    running = [f[0] for f in cur if f[2] == "Running" and not f[7].startswith("Waiting_for")]
    if len(running) > 1:
        bad.append(f"{when}: running at once: {running}")
waited = {f[0] for _, cur in samples(samples_file) for f in cur if f[7].startswith("Waiting_for")}
# 2. afterwards: no run's first node starts before another's end
rs = [l.split() for l in open(runs)]
rs = [r for r in rs if r[6] != "-"]
for a in rs:
    for b in rs:
        if a[0] < b[0] and a[6] < b[5] and b[6] < a[5]:
            bad.append(f"{a[0]} [{a[6]}, {a[5]}] overlaps {b[0]} [{b[6]}, {b[5]}]")
for n in ours:
    print(n, "waited for the lock" if n in waited else "never seen waiting")
for b in bad:
    print("OVERLAP", b)
sys.exit(1 if bad else 0)
PY
sed 's/^/   /' "$E/overlap.txt" >&2
log "   after: $(for n in $first $second $third; do awk -v n="$n" '$1 == n {printf "%s %s; ", $1, $3}' "$E/runs.txt"; done)"

# --- 5. the validate CronWorkflow every minute
log "== events 5. $CRON on '* * * * *' for ${CRON_SECONDS}s (concurrencyPolicy Forbid)"
[[ $(kubectl -n "$NS" get cronworkflow "$CRON" -o jsonpath='{.spec.concurrencyPolicy}') == Forbid ]] || fail "$CRON is not concurrencyPolicy Forbid"
sed "s|^  - '.*'$|  - '* * * * *'|" "$W/gen/events/validate-cronworkflow.yaml" >"$E/cron-every-minute.yaml"
grep -q "^  - '\* \* \* \* \*'$" "$E/cron-every-minute.yaml" || fail "could not shorten the schedule in $E/cron-every-minute.yaml"
t_cron=$(date -u +%FT%TZ)
cron_patched=1
kubectl apply --server-side --force-conflicts --field-manager="$MANAGER" -f "$E/cron-every-minute.yaml" >&2
cron_runs() {
  kubectl -n "$NS" get workflows -l "workflows.argoproj.io/cron-workflow=$CRON" -o json | python3 -c '
import json, sys
for w in sorted(json.load(sys.stdin)["items"], key=lambda w: w["metadata"]["creationTimestamp"]):
    s = w.get("status", {})
    print(w["metadata"]["name"], w["metadata"]["creationTimestamp"], s.get("startedAt") or "-", s.get("finishedAt") or "-", s.get("phase") or "Pending")'
}
end=$(( $(date +%s) + CRON_SECONDS ))
while (( $(date +%s) < end )); do
  echo "$(date -u +%FT%TZ)"; cron_runs | awk -v t="$t_cron" '$2 >= t' | sed 's/^/  /'; sleep 2
done >"$E/cron-samples.txt"
kubectl apply --server-side --force-conflicts --field-manager="$MANAGER" -f "$W/gen/events/validate-cronworkflow.yaml" >&2
cron_patched=
waitfor "! kubectl -n $NS get workflows -l workflows.argoproj.io/cron-workflow=$CRON,workflows.argoproj.io/completed!=true --no-headers 2>/dev/null | grep -q ." 300 || true
cron_runs | awk -v t="$t_cron" '$2 >= t' >"$E/cron-runs.txt"
log "   runs (name created started finished phase):"
sed 's/^/   | /' "$E/cron-runs.txt" >&2
python3 - "$E/cron-runs.txt" "$E/cron-samples.txt" >"$E/cron-check.txt" <<'PY' || { cat "$E/cron-check.txt" >&2; fail "the CronWorkflow did not fire every minute, or overlapped itself"; }
import sys
rs = [l.split() for l in open(sys.argv[1]) if l.strip()]
bad = []
if len(rs) < 2:
    bad.append(f"{len(rs)} run(s), want at least 2")
for r in rs:
    sec = int(r[1][17:19])
    if sec > 15:
        bad.append(f"{r[0]} created at {r[1]}: not at the top of a minute")
for a, b in zip(rs, rs[1:]):
    if a[1][:16] == b[1][:16]:
        bad.append(f"{a[0]} and {b[0]} in the same minute")
    if a[3] == "-" or b[2] < a[3]:
        bad.append(f"{b[0]} started {b[2]} before {a[0]} finished {a[3]}")
# every sample: at most one run unfinished
from samples import samples
for when, cur in samples(sys.argv[2]):
    open_ = [f[0] for f in cur if f[4] in ("Pending", "Running")]
    if len(open_) > 1:
        bad.append(f"{when}: {open_} at once")
print(f"{len(rs)} runs: " + "; ".join(f"{r[0]} {r[2][11:19]}-{r[3][11:19]} {r[4]}" for r in rs))
for b in bad:
    print("BAD", b)
sys.exit(1 if bad else 0)
PY
sed 's/^/   /' "$E/cron-check.txt" >&2
printf '| C | validate CronWorkflow, every minute for %ss | - | - | - | - | %s |\n' "$CRON_SECONDS" "$(head -1 "$E/cron-check.txt")" >>"$TABLE"

log "== events table"
cat "$TABLE" >&2
echo "events $(( $(date +%s) - t_ev ))s" >>"$W/times"
log "events done in $(( $(date +%s) - t_ev ))s"
