package resdeps

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// randomApps is a random platform: webhooks of random rules, selectors
// and services, Namespaces with labels, a CRD, and objects of several
// groups, kinds, namespaces and labels.
func randomApps(rng *rand.Rand) []App {
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	some := func(xs ...string) string {
		var out []string
		for _, x := range xs {
			if rng.Intn(3) == 0 {
				out = append(out, x)
			}
		}
		if len(out) == 0 {
			out = append(out, xs[rng.Intn(len(xs))])
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	sel := func() string {
		return pick("", "{matchLabels: {team: a}}", "{matchLabels: {team: b}}", "{matchExpressions: [{key: team, operator: Exists}]}",
			"{matchExpressions: [{key: team, operator: NotIn, values: [a]}]}", "{matchLabels: {bad key: x}}")
	}
	var apps []App
	n := 2 + rng.Intn(5)
	for i := 0; i < n; i++ {
		var docs []string
		for j := rng.Intn(4); j > 0; j-- {
			var w strings.Builder
			fmt.Fprintf(&w, "apiVersion: admissionregistration.k8s.io/%s\nkind: %s\nmetadata: {name: w%d-%d}\nwebhooks:\n",
				pick("v1", "v1", "v1beta1"), pick("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"), i, j)
			for h := 1 + rng.Intn(3); h > 0; h-- {
				fmt.Fprintf(&w, "- name: h%d.example.com\n  clientConfig: {service: {name: %s, namespace: sys}}\n", rng.Intn(3), pick("s0", "s1", "s2"))
				if fp := pick("Fail", "Ignore", ""); fp != "" {
					fmt.Fprintf(&w, "  failurePolicy: %s\n", fp)
				}
				if s := sel(); s != "" {
					fmt.Fprintf(&w, "  namespaceSelector: %s\n", s)
				}
				if s := sel(); s != "" && rng.Intn(2) == 0 {
					fmt.Fprintf(&w, "  objectSelector: %s\n", s)
				}
				fmt.Fprintf(&w, "  rules: [{apiGroups: %s, apiVersions: [\"*\"], operations: %s, resources: %s",
					some(`""`, "apps", "g1.example.com", "g2.example.com", `"*"`), some("CREATE", "UPDATE", "DELETE", `"*"`),
					some("configmaps", "deployments", "things", "widgets", `"*"`, `"*/*"`))
				if s := pick("", "Cluster", "Namespaced", `"*"`); s != "" {
					fmt.Fprintf(&w, ", scope: %s", s)
				}
				w.WriteString("}]\n")
			}
			docs = append(docs, w.String())
		}
		if rng.Intn(3) == 0 {
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: sys}\n", pick("s0", "s1", "s2")))
		}
		if rng.Intn(3) == 0 {
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns%d, labels: {team: %s}}\n", rng.Intn(3), pick("a", "b")))
		}
		if rng.Intn(4) == 0 {
			docs = append(docs, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.g1.example.com}\nspec: {group: g1.example.com, scope: "+pick("Namespaced", "Cluster")+", names: {kind: Thing, plural: things}}\n")
		}
		for j := rng.Intn(12); j > 0; j-- {
			kind := pick("v1 ConfigMap", "apps/v1 Deployment", "g1.example.com/v1 Thing", "g2.example.com/v1 Widget", "rbac.authorization.k8s.io/v1 ClusterRole")
			av, k, _ := strings.Cut(kind, " ")
			meta := fmt.Sprintf("name: o%d", j)
			if ns := pick("", "ns0", "ns1", "ns2"); ns != "" {
				meta += ", namespace: " + ns
			}
			if l := pick("", "team: a", "team: b"); l != "" {
				meta += ", labels: {" + l + "}"
			}
			docs = append(docs, fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {%s}\n", av, k, meta))
		}
		objs, _ := Parse(fmt.Sprintf("a%d.yaml", i), []byte(strings.Join(docs, "---\n")))
		apps = append(apps, App{Name: fmt.Sprintf("a%d", i), Namespace: pick("ns0", "ns1", "ns2"), Objects: objs})
	}
	return apps
}

// The index changes how many questions Infer asks, never the answer: on
// random platforms it gives what asking every webhook about every object
// gives.
func TestMatchIndexAsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	withEdges := 0
	for i := 0; i < 1000; i++ {
		apps := randomApps(rng)
		want, got := infer(apps, true), infer(apps, false)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("case %d: indexed\n%v\nbrute force\n%v", i, flat(got), flat(want))
		}
		for _, e := range got.Edges {
			if strings.Contains(e.Evidence[0].What, "webhook") {
				withEdges++
				break
			}
		}
	}
	if withEdges < 100 {
		t.Errorf("only %d random platforms had a webhook edge: the generator tests little", withEdges)
	}
}
