#!/usr/bin/env bash
# Smoke test of a running e2e cluster (make e2e-up first): Argo CD syncs an
# Application from the loopback Git daemon to a real pod; then an Argo
# Workflow (submitted with the argo CLI) runs two steps in pods that reach
# argocd-server by its cluster DNS name over TLS with an admin session token: one with
# the e2eapp image, one with our step image (deploystep validate, or the
# stand-in while ./cmd/deploystep does not build). Finally the Application is
# deleted with cascade. Uses its own namespace; leaves the platform alone.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ts0=$(date +%s)
B=$(tools_bin); export PATH=$B:$PATH
P=$STATE/pki
# Its own credentials, removed at exit: an admin session (the harness
# creates no token: deployctl's are made by docs/quickstart.md) in a Secret
# the smoke's pods mount, with the CA.
umask 077
kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath='{.data.password}' | base64 -d >"$STATE/smoke.password"
TOKEN=$(jq -n --rawfile p "$STATE/smoke.password" '{username: "admin", password: $p}' |
  curl -sSf --cacert "$P/ca.crt" -H 'Content-Type: application/json' -d @- "https://$ARGOCD_ADDR/api/v1/session" | jq -r .token)
rm -f "$STATE/smoke.password"
printf '%s' "$TOKEN" >"$STATE/smoke.token"
kubectl -n argo create secret generic e2e-smoke-token --from-file=token="$STATE/smoke.token" --dry-run=client -o yaml |
  kubectl apply --server-side --field-manager=e2e-smoke -f - >/dev/null
rm -f "$STATE/smoke.token"
kubectl -n argo create secret generic e2e-smoke-ca --from-file=ca.crt="$P/ca.crt" --dry-run=client -o yaml |
  kubectl apply --server-side --field-manager=e2e-smoke -f - >/dev/null
trap 'kubectl -n argo delete secret e2e-smoke-token e2e-smoke-ca --ignore-not-found >/dev/null' EXIT
api() { # METHOD PATH [BODY]
  curl -sS --fail-with-body --cacert "$P/ca.crt" -X "$1" "https://$ARGOCD_ADDR$2" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
APP=e2e-smoke

kubectl apply -f - >/dev/null <<YAML
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: $APP, namespace: argocd}
spec:
  project: default
  source: {repoURL: "git://127.0.0.1:$GIT_PORT/platform.git", targetRevision: main, path: apps/config}
  destination: {server: https://kubernetes.default.svc, namespace: $APP}
  syncPolicy: {syncOptions: [CreateNamespace=true]}
YAML
waitfor "api GET /api/v1/applications/$APP | jq -e '.status.sync.status == \"OutOfSync\"'" 60
api POST "/api/v1/applications/$APP/sync" '{}' >/dev/null
waitfor "api GET /api/v1/applications/$APP | jq -e '.status.health.status == \"Healthy\" and .status.sync.status == \"Synced\"'" 120
log "Argo CD synced $APP: $(kubectl -n $APP get deploy config -o jsonpath='{.status.readyReplicas}') pod ready"

if [[ -f $STATE/images/deploystep.standin ]]; then
  step='command: [/deploystep, probe, "https://argocd-server.argocd.svc:443/api/v1/applications/'$APP'"]'
else
  step='command: [/deploystep, validate, --app, '$APP']'
fi
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: e2e-smoke, namespace: argo}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: e2e-smoke-executor, namespace: argo}
rules:
- {apiGroups: [argoproj.io], resources: [workflowtaskresults], verbs: [create, patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: e2e-smoke-executor, namespace: argo}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: e2e-smoke-executor}
subjects: [{kind: ServiceAccount, name: e2e-smoke, namespace: argo}]
YAML
cat >"$STATE/smoke-wf.yaml" <<YAML
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: e2e-smoke-, namespace: argo}
spec:
  entrypoint: main
  serviceAccountName: e2e-smoke
  securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
  volumes:
  - {name: token, secret: {secretName: e2e-smoke-token, defaultMode: 0444}}
  - {name: ca, secret: {secretName: e2e-smoke-ca, defaultMode: 0444}}
  - {name: tmp, emptyDir: {}}
  templates:
  - name: main
    dag:
      tasks:
      - {name: argocd-api, template: probe}
      - {name: step-image, template: step, dependencies: [argocd-api]}
  - name: probe
    container:
      image: local.test/e2eapp:dev
      imagePullPolicy: Never
      command: [/usr/local/bin/e2eapp, probe, "https://argocd-server.argocd.svc:443/api/v1/applications/$APP"]
      env:
      - {name: PROBE_CA_FILE, value: /ca/ca.crt}
      - {name: PROBE_TOKEN_FILE, value: /var/run/secrets/argocd/token}
      - {name: PROBE_EXPECT, value: '"health":{"status":"Healthy"'}
      volumeMounts: [{name: token, mountPath: /var/run/secrets/argocd}, {name: ca, mountPath: /ca}]
  - name: step
    container:
      image: local.test/deploystep:dev
      imagePullPolicy: Never
      $step
      env:
      - {name: ARGOCD_SERVER, value: "argocd-server.argocd.svc:443"}
      - {name: ARGOCD_APP_NAMESPACE, value: argocd}
      - {name: ARGOCD_CA_FILE, value: /ca/ca.crt}
      - {name: ARGOCD_TOKEN_FILE, value: /var/run/secrets/argocd/token}
      - {name: RESULT_FILE, value: /tmp/result.json}
      - {name: PROBE_CA_FILE, value: /ca/ca.crt}
      - {name: PROBE_TOKEN_FILE, value: /var/run/secrets/argocd/token}
      - {name: PROBE_EXPECT, value: '"health":{"status":"Healthy"'}
      volumeMounts: [{name: token, mountPath: /var/run/secrets/argocd}, {name: ca, mountPath: /ca}, {name: tmp, mountPath: /tmp}]
YAML
s=$(date +%s)
if argo submit --kubeconfig "$KUBECONFIG" -n argo --wait -o name "$STATE/smoke-wf.yaml" >"$RUN/smoke-wf.name"; then :; fi
wf=$(tail -1 "$RUN/smoke-wf.name")
phase=$(kubectl -n argo get wf "$wf" -o jsonpath='{.status.phase}')
kubectl -n argo get wf "$wf" -o json | jq -r '.status.nodes[] | select(.type=="Pod") | "  \(.displayName): \(.phase) \(.startedAt) -> \(.finishedAt) \(.message // "")"' >&2
[[ $phase == Succeeded ]] || die "workflow $wf: $phase"
log "workflow $wf Succeeded in $(( $(date +%s) - s ))s"

api DELETE "/api/v1/applications/$APP?cascade=true&propagationPolicy=foreground" >/dev/null
waitfor "! kubectl -n argocd get application $APP" 120
waitfor "! kubectl -n $APP get deploy config" 60
kubectl delete namespace $APP --wait=false >/dev/null
kubectl -n argo delete wf "$wf" >/dev/null
log "smoke passed"
