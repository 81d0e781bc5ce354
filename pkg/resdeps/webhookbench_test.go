package resdeps

import (
	"fmt"
	"strings"
	"testing"
)

// webhookApps is the shape: one policy app deploying w admission
// webhooks (failurePolicy Fail) in w configurations, half of them on
// ConfigMaps (in three shapes of namespaceSelector), half on other groups,
// and one app deploying n ConfigMaps over 10 namespaces. distinct gives
// every webhook a selector of its own and every ConfigMap a label of its
// own: nothing alike to share, the index's worst case.
func webhookApps(w, n int, distinct bool) []App {
	shapes, labelled := 3, ""
	if distinct {
		shapes = w
	}
	var b strings.Builder
	for i := 0; i < w; i++ {
		group, res := `""`, "configmaps"
		if i%2 == 1 {
			group, res = fmt.Sprintf("g%d.example.com", i%97), "widgets"
		}
		fmt.Fprintf(&b, `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: w%d}
webhooks:
- name: w%d.example.com
  failurePolicy: Fail
  clientConfig: {service: {name: policy, namespace: policy}}
  namespaceSelector: {matchExpressions: [{key: skip%d, operator: DoesNotExist}]}
  rules: [{apiGroups: [%s], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [%s]}]
`, i, i, i%shapes, group, res)
	}
	var c strings.Builder
	for i := 0; i < n; i++ {
		if distinct {
			labelled = fmt.Sprintf(", labels: {i: %q}", fmt.Sprint(i))
		}
		fmt.Fprintf(&c, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: ns%d%s}\n", i, i%10, labelled)
	}
	parse := func(name, yml string) App {
		objs, errs := Parse(name+".yaml", []byte(yml))
		if len(errs) > 0 {
			panic(fmt.Sprint(errs))
		}
		return App{Name: name, Namespace: name, Objects: objs}
	}
	return []App{parse("policy", b.String()), parse("cms", c.String())}
}

func benchWebhooks(b *testing.B, w, n int, distinct bool) {
	apps := webhookApps(w, n, distinct)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := Infer(apps)
		if len(r.Edges) != 1 || len(r.Edges[0].Evidence) != (w+1)/2 {
			b.Fatalf("%d edges", len(r.Edges))
		}
	}
}

// go test -run '^$' -bench Webhooks -benchtime 1x ./pkg/resdeps
func BenchmarkWebhooks300x2000(b *testing.B)   { benchWebhooks(b, 300, 2000, false) }
func BenchmarkWebhooks3000x3000(b *testing.B)  { benchWebhooks(b, 3000, 3000, false) }
func BenchmarkWebhooks5000x20000(b *testing.B) { benchWebhooks(b, 5000, 20000, false) }

// Nothing alike: every webhook on ConfigMaps has a namespaceSelector of
// its own, every ConfigMap a label of its own.
func BenchmarkWebhooksDistinct1000x1000(b *testing.B)  { benchWebhooks(b, 1000, 1000, true) }
func BenchmarkWebhooksDistinct5000x20000(b *testing.B) { benchWebhooks(b, 5000, 20000, true) }
