package resdeps

import (
	"fmt"
	"testing"
)

// benchApps is a platform of n apps: 50 operators, each deploying a CRD and
// a validating webhook (failurePolicy Fail, a namespaceSelector), one
// storage app with the default StorageClass, and n-51 workloads with 20
// objects each: a custom resource of one operator, a PVC, an Ingress, a
// Deployment, Services and ConfigMaps in their own namespace.
func benchApps(n int) []App {
	var apps []App
	parse := func(name, yml string) App {
		objs, errs := Parse(name+".yaml", []byte(yml))
		if len(errs) > 0 {
			panic(fmt.Sprint(errs))
		}
		return App{Name: name, Namespace: name, CreatesNamespace: true, Objects: objs}
	}
	for i := 0; i < 50; i++ {
		apps = append(apps, parse(fmt.Sprintf("op%02d", i), fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.op%02d.example.com}
spec: {group: op%02d.example.com, scope: Namespaced, names: {kind: Thing, plural: things}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: op%02d}
webhooks:
- name: v.op%02d.example.com
  failurePolicy: Fail
  clientConfig: {service: {name: op, namespace: op%02d}}
  namespaceSelector: {matchExpressions: [{key: skip, operator: DoesNotExist}]}
  rules: [{apiGroups: [op%02d.example.com], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [things]}]
`, i, i, i, i, i, i)))
	}
	apps = append(apps, parse("storage", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: std, annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}}\nprovisioner: x\n"))
	for i := 51; i < n; i++ {
		yml := fmt.Sprintf("apiVersion: op%02d.example.com/v1\nkind: Thing\nmetadata: {name: t}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec: {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: {spec: {containers: []}}}\n", i%50)
		for j := 0; j < 8; j++ {
			yml += fmt.Sprintf("---\napiVersion: v1\nkind: Service\nmetadata: {name: s%d}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", j, j)
		}
		apps = append(apps, parse(fmt.Sprintf("app%05d", i), yml))
	}
	return apps
}

// go test -run '^$' -bench Infer -benchtime 3x ./pkg/resdeps
func BenchmarkInfer1000(b *testing.B) {
	apps := benchApps(1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := Infer(apps); len(r.Edges) != 2*949 {
			b.Fatalf("%d edges", len(r.Edges))
		}
	}
}
