package importer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/render"
)

// dump is a `kubectl get applications -A -o yaml` List of n Applications
// in 50 team stacks, five waves in each, with status and server metadata.
func dump(n int) []byte {
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
`, i, i%50, (i/50)%5)
	}
	return []byte(b.String())
}

// BenchmarkImport10000 imports 10,000 Applications (8 MB): read, build,
// load, compile and compare, size check; with stacks from a label (320,000
// dependencies inferred from waves) and from parents (the default), in this
// process (time and allocations; BenchmarkImportRSS measures the CLI's
// peak memory on the same dump).
func BenchmarkImport10000(b *testing.B) {
	data := dump(10000)
	for _, from := range []StackFrom{{Kind: "label", Key: "team"}, {Kind: "parent"}} {
		b.Run(from.String(), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				in := &Input{}
				if err := in.Parse("dump.yaml", "dump", data); err != nil {
					b.Fatal(err)
				}
				if _, err := Import(in, Options{Name: "p", StackFrom: from}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A spec whose deploy workflow `deployctl generate` would refuse (over
// render.MaxObjectBytes) is still written, with a note saying so and why.
func TestTooLargeNoted(t *testing.T) {
	in := &Input{}
	if err := in.Parse("dump.yaml", "dump", dump(1000)); err != nil {
		t.Fatal(err)
	}
	r, err := Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "label", Key: "team"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "`deployctl generate` will refuse this spec as it is: workflow-templates/deploy.yaml would be "
	for _, n := range r.Notes {
		if strings.HasPrefix(n, want) && strings.HasSuffix(n, "the scope has 1000 apps; split the platform into several platform specs with their own workflows, or generate per stack with --scope stack:NAME") {
			return
		}
	}
	t.Errorf("no note %q…:\n%s", want, strings.Join(r.Notes, "\n"))
}

// renderedSize is exactly the size of the rendered WorkflowTemplate: the
// too-large note prints it.
func TestRenderedSize(t *testing.T) {
	for _, n := range []int{1, 2, 3, 120} {
		in := &Input{}
		if err := in.Parse("dump.yaml", "dump", dump(n)); err != nil {
			t.Fatal(err)
		}
		for _, from := range []StackFrom{{Kind: "label", Key: "team"}, {}} {
			r, err := Import(in, Options{Name: "p", StackFrom: from})
			if err != nil {
				t.Fatal(err)
			}
			_, err = compileSpec("p.yaml", r.YAML, func(out *compile.Output) {
				for _, a := range compile.Actions {
					data, err := render.Object(out.WorkflowTemplates[a])
					if err != nil {
						t.Fatal(err)
					}
					got, err := renderedSize(out.WorkflowTemplates[a])
					if err != nil {
						t.Fatal(err)
					}
					if got != len(data) {
						t.Errorf("%d apps, %s: renderedSize %d, rendered %d bytes", n, a, got, len(data))
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
