package importer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appdump"
)

// BenchmarkImportRSS runs the built CLI, `deployctl import`, on dumps of
// 1,000 and 10,000 Applications with stacks from parents (dump: five waves
// a team) and from a label (a hundred waves of two apps a team: with five
// waves of 40, 10,000 apps imply 320,000 dependencies, over MaxWaveEdges,
// and are refused), and reports its peak RSS (the kernel's maxrss) against the input:
// peak-MB, floor-MB (the same binary importing one Application: the Go
// runtime and the pages of the binary it touches), and rss/input, the
// peak above that floor per byte of input (issue 11: at most 10). `make
// bench-import` runs it.
func BenchmarkImportRSS(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "deployctl")
	build := exec.Command("go", "build", "-o", bin, "github.com/deployctl/deployctl/cmd/deployctl")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(b *testing.B, input, stackFrom string) int64 {
		cmd := exec.Command(bin, "import", "--name", "p", "--stack-from", stackFrom, "-o", filepath.Join(dir, "out.yaml"), input)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("deployctl import %s: %v\n%s", input, err, out)
		}
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	}
	one := filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(one, dump(1), 0o644); err != nil {
		b.Fatal(err)
	}
	// The floor varies with how many of the binary's pages the kernel
	// maps in: the least of a few runs.
	floor := run(b, one, "parent")
	for range 4 {
		floor = min(floor, run(b, one, "parent"))
	}
	for _, n := range []int{1000, 10000} {
		for _, from := range []string{"parent", "label=team"} {
			data := dump(n)
			if from != "parent" {
				data = appdump.List(n, 100)
			}
			input := filepath.Join(dir, fmt.Sprintf("dump-%d-%s.yaml", n, from))
			if err := os.WriteFile(input, data, 0o644); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%d/%s", n, from), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				var peak int64
				for i := 0; i < b.N; i++ {
					peak = max(peak, run(b, input, from))
				}
				b.ReportMetric(float64(peak)/1e6, "peak-MB")
				b.ReportMetric(float64(floor)/1e6, "floor-MB")
				b.ReportMetric(float64(peak-floor)/float64(len(data)), "rss/input")
			})
		}
	}
}
