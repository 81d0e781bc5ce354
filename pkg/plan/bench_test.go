package plan

import (
	"fmt"
	"testing"

	"github.com/deployctl/deployctl/internal/testplatform"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// BenchmarkLoadValidatePlan measures what `deployctl plan` does: parse the
// YAML, check the schema and every rule, build the DAG, compute the plan.
func BenchmarkLoadValidatePlan(b *testing.B) {
	for _, n := range []int{45, 500, 5000} {
		data := testplatform.YAML(testplatform.Sized(1, n))
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				doc, err := spec.Load("bench.yaml", data)
				if err != nil {
					b.Fatal(err)
				}
				d, err := dag.Build(doc)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Make(d, "platform", dag.Deploy); err != nil {
					b.Fatal(err)
				}
				_ = d.Redundant()
			}
		})
	}
}
