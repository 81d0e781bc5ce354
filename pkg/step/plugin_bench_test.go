package step_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/step"
	"github.com/deployctl/deployctl/pkg/step/plugin"
	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

// BenchmarkServe500 runs 500 concurrent sync-and-wait nodes through the
// plugin's HTTP handler, called as the agent calls (every node once a
// second until it finishes), each against a fake Argo CD of its own, with
// the step's production timing. It reports per node: peak heap in use,
// goroutines, RSS growth, and CPU time, the last with the fakes' own CPU
// over as long a time, measured after the run, taken off. (make
// bench-plugin)
func BenchmarkServe500(b *testing.B) {
	const nodes = 500
	for range b.N {
		fakes := make([]*step.FakeArgo, nodes)
		k := pt.NewKube(b, "ns", "wf", "uid-bench")
		bodies := make([][]byte, nodes)
		for i := range fakes {
			fakes[i] = step.NewFakeArgoFor(b, 200*time.Millisecond, false, 50*time.Millisecond)
			inputs := []pt.Param{{Name: "app", Value: "web-app"}, {Name: "node", Value: strconv.Itoa(i)}}
			k.SetNode(pt.Node{ID: fmt.Sprintf("wf-%d", i), Type: "Plugin", TemplateName: "sync-and-wait", Phase: "Running",
				StartedAt: "2026-11-24T04:00:00Z", Inputs: &pt.Inputs{Parameters: inputs}})
			env := fakes[i].StepEnv(b)
			env["REQUEST_TIMEOUT"] = "30s" // production's: two shared cores answer slowly under this load
			bodies[i] = k.Body(pt.Template("sync-and-wait", inputs,
				[]string{"sync-and-wait", "--app", "web-app", "--sync-timeout", "2m", "--health-timeout", "2m"}, env))
		}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := plugin.New(ctx, plugin.Config{Token: agentToken, Exec: step.Exec, KubeURL: k.URL, KubeTokenFile: k.TokenFile})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		heap0, g0, rss0 := heapInUse(), runtime.NumGoroutine(), rssKiB()
		cpu0 := cpuTime()
		start := time.Now()

		var peakHeap, peakG atomic.Int64
		stopSampling := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				peakHeap.Store(max(peakHeap.Load(), int64(heapInUse())))
				peakG.Store(max(peakG.Load(), int64(runtime.NumGoroutine())))
				select {
				case <-stopSampling:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		pending := map[int]bool{}
		for i := range nodes {
			pending[i] = true
		}
		failed := 0
		for len(pending) > 0 {
			for i := range pending {
				_, rep := pt.Call(b, s, agentToken, bodies[i])
				if rep.Node.Phase != "Running" {
					delete(pending, i)
					if rep.Node.Phase != "Succeeded" {
						failed++
						b.Logf("node %d: %s %s", i, rep.Node.Phase, rep.Node.Message)
					}
				}
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("%d nodes still running after 5m", len(pending))
			}
			time.Sleep(time.Second) // the agent's requeue
		}
		makespan := time.Since(start)
		cpuRun := cpuTime() - cpu0
		rss1 := rssKiB()
		close(stopSampling)
		<-sampled
		cancel()
		s.Wait()
		// The fakes alone, idle, for as long: their controller loops and
		// periodic reconciliations are not the plugin's cost.
		cpuIdle0 := cpuTime()
		time.Sleep(makespan)
		cpuFakes := cpuTime() - cpuIdle0
		if failed > 0 {
			b.Fatalf("%d of %d nodes did not succeed", failed, nodes)
		}
		for i, f := range fakes {
			if f.SyncRequests() != 1 {
				b.Fatalf("node %d: %d sync requests", i, f.SyncRequests())
			}
		}
		b.ReportMetric(float64(peakHeap.Load()-int64(heap0))/nodes/1024, "heap-KiB/node")
		b.ReportMetric(float64(peakG.Load()-int64(g0))/nodes, "goroutines/node")
		b.ReportMetric(float64(rss1-rss0)/nodes, "rss-KiB/node")
		b.ReportMetric(float64((cpuRun-cpuFakes).Milliseconds())/nodes, "cpu-ms/node")
		b.ReportMetric(float64(cpuRun.Milliseconds())/nodes, "cpu-ms/node-with-fakes")
		b.ReportMetric(makespan.Seconds(), "s-makespan")
	}
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssKiB is the process's resident set (Linux), 0 elsewhere.
func rssKiB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}
