// Package appdump makes Argo CD Application dumps of any size for the
// import's tests and benchmarks.
package appdump

import (
	"fmt"
	"strings"
)

// List is a `kubectl get applications -A -o yaml` List of n Applications,
// with status and server metadata, labelled team-0 … team-49 (app i in team
// i mod 50) and in waves 0 … waves-1 (each run of 50 apps one wave higher,
// around again after the last): with 5 waves and 10,000 apps, each team has
// five waves of 40 apps; with 100, a hundred waves of two.
func List(n, waves int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `- apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata:
    name: app-%05[1]d
    namespace: argocd
    labels: {team: team-%[2]d}
    annotations: {argocd.argoproj.io/sync-wave: "%[3]d"}
    finalizers: [resources-finalizer.argocd.argoproj.io]
    creationTimestamp: "2026-01-01T00:00:00Z"
    resourceVersion: "%[1]d"
    uid: 00000000-0000-0000-0000-%012[1]d
  spec:
    project: default
    source: {repoURL: https://git.example.com/platform.git, targetRevision: main, path: apps/app-%05[1]d}
    destination: {server: https://kubernetes.default.svc, namespace: ns-%05[1]d}
    syncPolicy:
      automated: {prune: true, selfHeal: true}
      syncOptions: [CreateNamespace=true]
  status:
    sync: {status: Synced, revision: 0123456789abcdef0123456789abcdef01234567}
    health: {status: Healthy}
`, i, i%50, (i/50)%waves)
	}
	return []byte(b.String())
}
