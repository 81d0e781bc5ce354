package resdeps

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// flat renders edges as "from → to: what×count" lines, for comparison.
func flat(r *Result) []string {
	var out []string
	for _, e := range r.Edges {
		for _, ev := range e.Evidence {
			out = append(out, fmt.Sprintf("%s → %s: %s×%d", e.From, e.To, ev.What, ev.Count))
		}
	}
	return out
}

// The chart fixtures (testdata/charts/SOURCE.md); edges written by reading them.
func TestInferCharts(t *testing.T) {
	apps, err := ReadDir("testdata/charts")
	if err != nil {
		t.Fatal(err)
	}
	r := Infer(apps)
	want := []string{
		"platform-issuers → cert-manager: CRD certificates.cert-manager.io×1",
		"platform-issuers → cert-manager: CRD clusterissuers.cert-manager.io×2",
		"platform-issuers → cert-manager: validating webhook webhook.cert-manager.io (service cert-manager/cert-manager-webhook)×3",
		"secret-stores → external-secrets: CRD clustersecretstores.external-secrets.io×1",
		"secret-stores → external-secrets: validating webhook validate.clustersecretstore.external-secrets.io (service external-secrets/external-secrets-webhook)×1",
		"webapp → cloudnative-pg: CRD clusters.postgresql.cnpg.io×1",
		"webapp → cloudnative-pg: validating webhook vcluster.cnpg.io (service cnpg-system/cnpg-webhook-service)×1",
		"webapp → external-secrets: CRD externalsecrets.external-secrets.io×1",
		"webapp → external-secrets: validating webhook validate.externalsecret.external-secrets.io (service external-secrets/external-secrets-webhook)×1",
		"webapp → ingress-nginx: IngressClass nginx×1",
		"webapp → ingress-nginx: validating webhook validate.nginx.ingress.kubernetes.io (service ingress-nginx/ingress-nginx-controller-admission)×1",
		"webapp → local-path-provisioner: default StorageClass local-path×1",
		"webapp → platform-issuers: ClusterIssuer my-ca-issuer×1",
		"webapp → secret-stores: ClusterSecretStore vault-backend×1",
	}
	if got := flat(r); !reflect.DeepEqual(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(r.Conflicts) > 0 {
		t.Errorf("conflicts: %v", r.Conflicts)
	}
	if got := r.Edges[0].Text(); got != "needs CRD certificates.cert-manager.io from cert-manager (and 2 more)" {
		t.Errorf("text: %q", got)
	}
	if ev := r.Edges[0].Evidence[0]; ev.Object != "Certificate cert-manager/my-selfsigned-ca" || ev.Where != "testdata/charts/platform-issuers/issuers.yaml:10" {
		t.Errorf("evidence object: %+v", ev)
	}
	// Same input in another order: the same result.
	rev := append([]App(nil), apps...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if !reflect.DeepEqual(Infer(rev), r) {
		t.Error("the result depends on the order of the apps")
	}
}
