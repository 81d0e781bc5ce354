package generate

import (
	"errors"
	"fmt"
	"testing"

	"github.com/deployctl/deployctl/internal/testplatform"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
)

// BenchmarkGenerate measures compile + render and reports the largest
// generated manifest. Past the object size limit the compiler must refuse
// with advice (render.MaxObjectBytes), which the 5,000-app case shows.
func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{45, 500, 700, 5000} {
		doc, err := spec.Load("bench.yaml", testplatform.YAML(testplatform.Sized(1, n)))
		if err != nil {
			b.Fatal(err)
		}
		d, err := dag.Build(doc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			largest := 0
			for i := 0; i < b.N; i++ {
				tree, _, err := Tree(d, "platform")
				if err != nil {
					var size *render.TooLargeError
					if errors.As(err, &size) {
						b.ReportMetric(0, "largest-bytes")
						b.Logf("%d apps: refused: %v", n, err)
						return
					}
					b.Fatal(err)
				}
				for _, data := range tree {
					largest = max(largest, len(data))
				}
			}
			b.ReportMetric(float64(largest), "largest-bytes")
		})
	}
}
