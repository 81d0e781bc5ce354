package step_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deployctl/deployctl/internal/safehttp/safehttptest"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step"
	"github.com/deployctl/deployctl/pkg/step/plugin"
	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

// BenchmarkServeHostile sends the plugin sidecar, all at once, the
// hostile requests of issue 22: 25 times each ARGOCD_CA_FILE, the token
// file and --manifest naming /dev/zero, and validate against an Argo CD
// whose every answer is a gzip bomb (256 MiB inflated); 30 validates of
// 20,000 apps (30 of them kept 1.1 GB of results); 100 nodes whose result
// is just under a node's 1 MiB (64 MiB of them are kept). It reports the process's peak heap
// and peak RSS, which must stay within the sidecar's 320 MiB memory
// limit, under the soft memory limit deploystep serve sets.
// (make bench-plugin-hostile)
func BenchmarkServeHostile(b *testing.B) {
	const perClass = 25
	const sidecarLimit = 320 << 20
	bomb := safehttptest.GzipBomb(`{"metadata":{"name":"web"},"x":"`, 256, `"}`)
	for range b.N {
		k := pt.NewKube(b, "ns", "wf", "uid-hostile")
		bombArgo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		}))
		tok := b.TempDir() + "/token"
		os.WriteFile(tok, []byte("tok-0123456789\n"), 0o600)
		env := func(server string, kv ...string) map[string]string {
			m := map[string]string{"ARGOCD_SERVER": server, "ARGOCD_PLAINTEXT": "true", "ARGOCD_TOKEN_FILE": tok, "REQUEST_TIMEOUT": "5s"}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			return m
		}
		bombAddr := strings.TrimPrefix(bombArgo.URL, "http://")
		var bodies [][]byte
		for i := range perClass {
			app := "web-" + strconv.Itoa(i)
			bodies = append(bodies,
				k.Body(pt.Template("validate", nil, []string{"validate", "--app", app}, env("127.0.0.1:1", "ARGOCD_CA_FILE", "/dev/zero"))),
				k.Body(pt.Template("validate", nil, []string{"validate", "--app", app + "-t"}, env("127.0.0.1:1", "ARGOCD_TOKEN_FILE", "/dev/zero"))),
				k.Body(pt.Template("validate", nil, []string{"validate", "--app", app + "-gz"}, env(bombAddr))))
			inputs := []pt.Param{{Name: "app", Value: app}}
			k.SetNode(pt.Node{ID: "wf-" + app, Type: "Plugin", TemplateName: "sync-and-wait", Phase: "Running",
				StartedAt: "2026-11-24T04:00:00Z", Inputs: &pt.Inputs{Parameters: inputs}})
			bodies = append(bodies, k.Body(pt.Template("sync-and-wait", inputs,
				[]string{"sync-and-wait", "--app", app, "--manifest", "/dev/zero", "--sync-timeout", "1m", "--health-timeout", "1m"}, env("127.0.0.1:1"))))
		}
		for i := range 30 { // refused: more apps than a validate node may hold
			args := []string{"validate"}
			for j := range 20000 {
				args = append(args, "--app", fmt.Sprintf("a%d-%d", i, j))
			}
			bodies = append(bodies, k.Body(pt.Template("validate", nil, args, env("127.0.0.1:1"))))
		}
		for i := range 100 { // results of 1 MiB, each its own
			bodies = append(bodies, k.Body(pt.Template("validate", nil, []string{"validate", "--app", fmt.Sprint("big-", i)}, env("127.0.0.1:1"))))
		}
		// A result as large as a node's may be, without fake apps: the
		// outcome the step would hand the plugin.
		exec := func(ctx context.Context, args []string, env func(string) (string, bool), log io.Writer) step.Outcome {
			if len(args) == 3 && strings.HasPrefix(args[2], "big-") {
				return step.Outcome{Code: exitcode.Failure, Summary: "validate: Failed", Result: bytes.Repeat([]byte("r"), plugin.ResultLimit-100)}
			}
			return step.Exec(ctx, args, env, log)
		}
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(plugin.SoftMemoryLimit)) // as deploystep serve runs
		ctx, cancel := context.WithCancel(context.Background())
		s, err := plugin.New(ctx, plugin.Config{Token: agentToken, Exec: exec, KubeURL: k.URL, KubeTokenFile: k.TokenFile})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		heap0 := heapInUse()
		var peakHeap atomic.Int64
		stop, sampled := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				peakHeap.Store(max(peakHeap.Load(), int64(heapInUse())))
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		pending := map[int]bool{}
		for i := range bodies {
			pending[i] = true
		}
		phases := map[string]int{}
		for len(pending) > 0 {
			for i := range pending {
				_, rep := pt.Call(b, s, agentToken, bodies[i])
				if rep.Node.Phase != "Running" {
					delete(pending, i)
					phases[rep.Node.Phase]++
				}
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("%d nodes still running after 5m", len(pending))
			}
			time.Sleep(250 * time.Millisecond)
		}
		makespan := time.Since(start)
		close(stop)
		<-sampled
		cancel()
		s.Wait()
		bombArgo.Close()
		hwm := peakRSSKiB()
		b.Logf("%d hostile nodes, phases %v, in %v; peak heap %d MiB (%d MiB before), peak RSS %d MiB",
			len(bodies), phases, makespan.Round(time.Millisecond), peakHeap.Load()>>20, heap0>>20, hwm>>10)
		if phases["Succeeded"] != 0 {
			b.Fatalf("a hostile node succeeded: %v", phases)
		}
		if peakHeap.Load() > sidecarLimit || hwm<<10 > sidecarLimit {
			b.Fatalf("peak heap %d MiB, RSS %d MiB: past the sidecar's 320 MiB", peakHeap.Load()>>20, hwm>>10)
		}
		b.ReportMetric(float64(peakHeap.Load())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(hwm)/1024, "peak-rss-MiB")
		b.ReportMetric(makespan.Seconds(), "s-makespan")
	}
}

// peakRSSKiB is the process's peak resident set (Linux VmHWM), 0 elsewhere.
func peakRSSKiB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}
