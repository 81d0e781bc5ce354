package plugin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

// BenchmarkLookups200Of1000 is a DAG level starting at once in plugin
// mode at 1,000 apps (issue 24): 200 sync-and-wait lookups together
// against a Workflow shaped like the 1,000-app one of make e2e-scale
// (compressed node status, a Retry parent and a Plugin node per app, 800
// of them finished with their results; the spec inline), run as deploystep
// serve runs (its soft memory limit). The lookups read only the
// Workflow's uid and start; the nodes weigh on the body they decode. It reports the peak of the heap's
// live objects above where it started, the Workflow GETs per level and the
// Workflow's sizes, and the lookups that failed (each would be tried
// again). One op is one level: make bench-plugin-lookups.
func BenchmarkLookups200Of1000(b *testing.B) {
	const apps, level = 1000, 200
	k := pt.NewKube(b, "ns", "wf", "uid-1")
	k.Compress()
	tasks := make([]map[string]any, apps)
	root := pt.Node{ID: "wf", Name: "wf", Type: "DAG", TemplateName: "deploy", Phase: "Running", StartedAt: startedAt}
	for i := range apps {
		app := fmt.Sprintf("a%04d", i)
		params := benchParams(app, i)
		ref := map[string]string{"name": "deployctl-sync-and-wait-plugin", "template": "sync-and-wait"}
		retry := pt.Node{ID: fmt.Sprintf("wf-%d", 1000000000+i), Name: "wf." + app, DisplayName: app, Type: "Retry", TemplateRef: ref,
			Phase: "Running", BoundaryID: "wf", StartedAt: startedAt, Inputs: &pt.Inputs{Parameters: params}}
		node := pt.Node{ID: fmt.Sprintf("wf-%d", 2000000000+i), Name: "wf." + app + "(0)", DisplayName: app + "(0)", Type: "Plugin", TemplateRef: ref,
			Phase: "Running", BoundaryID: "wf", StartedAt: startedAt, Inputs: &pt.Inputs{Parameters: params}}
		if i >= level {
			result := benchResult(app, i)
			for _, n := range []*pt.Node{&retry, &node} {
				n.Phase, n.FinishedAt = "Succeeded", "2026-11-27T09:00:24Z"
				n.Message = fmt.Sprintf("sync-and-wait %s: Healthy at revision 400fa59249b3 (sync %d.%ds, healthy 0.5s after it, 0 checks passed)", app, 10+i%30, i%10)
				n.Outputs = &pt.Inputs{Parameters: []pt.Param{{Name: "result", Value: result}}}
			}
		}
		retry.Children = []string{node.ID}
		root.Children = append(root.Children, retry.ID)
		k.SetNode(retry)
		k.SetNode(node)
		tasks[i] = map[string]any{"name": app, "dependencies": []string{fmt.Sprintf("a%04d", (i*7)%apps), fmt.Sprintf("a%04d", (i*13)%apps)},
			"templateRef": map[string]any{"name": "deployctl-sync-and-wait-plugin", "template": "sync-and-wait", "clusterScope": true},
			"arguments": map[string]any{"parameters": []map[string]any{{"name": "app", "value": app},
				{"name": "manifest-base64", "valueFrom": map[string]any{"configMapKeyRef": map[string]string{"name": "scale-deploy-applications-1", "key": app}}}}}}
	}
	k.SetNode(root)
	k.SetSpec(map[string]any{"entrypoint": "deploy", "templates": []map[string]any{{"name": "deploy", "dag": map[string]any{"tasks": tasks}}}})
	wfs := make([]workflowRef, level)
	nodes := make([]string, level)
	for i := range level {
		app := fmt.Sprintf("a%04d", i)
		wfs[i], nodes[i] = lookupNode(b, k, pt.AtNode(pt.Template("sync-and-wait", benchParams(app, i), []string{"sync-and-wait", "--app", app}, connEnv), "wf."+app, "0"))
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(SoftMemoryLimit)) // as deploystep serve runs
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := New(ctx, Config{Token: agentToken, KubeURL: k.URL, KubeTokenFile: k.TokenFile})
	if err != nil {
		b.Fatal(err)
	}
	// The Workflow's sizes, as the API serves it.
	if _, err := s.lookup(ctx, wfs[0], nodes[0]); err != nil {
		b.Fatal(err)
	}
	wfBytes, compressedBytes, plainBytes := k.Sizes()
	runtime.GC()
	heap0 := heapObjects()
	var peak atomic.Uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), heapObjects()))
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	gets0 := k.Gets()
	var failed atomic.Int64 // lookups that failed (a transient error is tried again in production)
	var firstErr atomic.Pointer[error]
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for i := range level {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := s.lookup(ctx, wfs[i], nodes[i])
				if err == nil && id.syncID != wantID("uid-1", nodes[i], startedAt) {
					b.Errorf("lookup %d: sync id %s", i, id.syncID)
				}
				if err != nil && failed.Add(1) == 1 {
					firstErr.CompareAndSwap(nil, &err)
				}
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak.Load()-min(peak.Load(), heap0))/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(k.Gets()-gets0)/float64(b.N), "GETs/level")
	b.ReportMetric(float64(failed.Load())/float64(b.N), "failed/level")
	if e := firstErr.Load(); e != nil {
		b.Logf("first failure: %v", *e)
	}
	b.Logf("Workflow %d bytes, status.compressedNodes %d bytes, %d bytes of node JSON; heap before %.1f MiB; the process's peak RSS %s",
		wfBytes, compressedBytes, plainBytes, float64(heap0)/(1<<20), peakRSS())
}

// benchParams are a sync-and-wait node's inputs as the compiler passes
// them: the app, its Application as base64 JSON, the defaults.
func benchParams(app string, i int) []pt.Param {
	manifest := fmt.Sprintf(`{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"finalizers":["resources-finalizer.argocd.argoproj.io"],`+
		`"labels":{"app.kubernetes.io/managed-by":"deployctl","deployctl.dev/platform":"scale","deployctl.dev/stack":"l%03d"},"name":%q,"namespace":"argocd"},`+
		`"spec":{"destination":{"namespace":"scale","server":"https://kubernetes.default.svc"},"project":"default","source":{"path":"scale/%s",`+
		`"repoURL":"git://127.0.0.1:9418/platform.git","targetRevision":"main"},"syncPolicy":{"syncOptions":["CreateNamespace=true"]}}}`, i/100, app, app)
	return []pt.Param{{Name: "app", Value: app},
		{Name: "manifest-base64", Value: base64.StdEncoding.EncodeToString([]byte(manifest)),
			Description: "the Application as base64 JSON; base64 keeps user text out of Argo expressions"},
		{Name: "sync-timeout", Value: "3m0s", Default: "3m0s"}, {Name: "health-timeout", Value: "3m0s", Default: "3m0s"},
		{Name: "deadline-seconds", Value: "480", Default: "480", Description: "hard limit of one attempt (sync + health timeouts + slack)"},
		{Name: "checks"}, {Name: "allow-suspended", Value: "false", Default: "false"},
		{Name: "app-namespace", Value: "argocd", Default: "argocd",
			Description: "namespace of the Application objects (an app's applicationNamespace); default Argo CD's"},
		{Name: "retry-limit", Value: "3", Default: "3"}, {Name: "retry-backoff", Value: "2s", Default: "2s"}, {Name: "retry-factor", Value: "2", Default: "2"}}
}

// benchResult is a finished node's result JSON as the step writes it,
// its ids and times drawn from a fixed seed.
func benchResult(app string, i int) string {
	r := rand.New(rand.NewPCG(1, uint64(i)))
	at := func(sec float64) string {
		return time.Date(2026, 11, 27, 8, 59, 0, 0, time.UTC).Add(time.Duration(sec * float64(time.Second))).Format(time.RFC3339Nano)
	}
	start := r.Float64() * 500
	req, synced := start+r.Float64()*6, start+6+r.Float64()*25
	healthy := synced + r.Float64()
	type timings struct {
		StartedAt       string  `json:"startedAt"`
		SyncRequestedAt string  `json:"syncRequestedAt"`
		SyncFinishedAt  string  `json:"syncFinishedAt"`
		HealthyAt       string  `json:"healthyAt"`
		FinishedAt      string  `json:"finishedAt"`
		SyncSeconds     float64 `json:"syncSeconds"`
		HealthSeconds   float64 `json:"healthSeconds"`
		TotalSeconds    float64 `json:"totalSeconds"`
	}
	out, _ := json.MarshalIndent(struct {
		Command         string   `json:"command"`
		Outcome         string   `json:"outcome"`
		ExitCode        int      `json:"exitCode"`
		Message         string   `json:"message"`
		APICalls        int      `json:"apiCalls"`
		StartedAt       string   `json:"startedAt"`
		FinishedAt      string   `json:"finishedAt"`
		DurationSeconds float64  `json:"durationSeconds"`
		App             string   `json:"app"`
		AppNamespace    string   `json:"appNamespace"`
		Created         bool     `json:"created"`
		SyncID          string   `json:"syncID"`
		SyncRevision    string   `json:"syncRevision"`
		OperationPhase  string   `json:"operationPhase"`
		Health          string   `json:"health"`
		SyncStatus      string   `json:"syncStatus"`
		Messages        []string `json:"messages"`
		Timings         timings  `json:"timings"`
	}{"sync-and-wait", "Succeeded", 0, "", 5 + r.IntN(6), at(start), at(healthy), healthy - start, app, "argocd", true,
		fmt.Sprintf("%016x", r.Uint64()), "400fa59249b3ca04a359eb83d2e350ff9a3df9d8", "Succeeded", "Healthy", "Synced",
		[]string{"created the application from the manifest"},
		timings{at(start), at(req), at(synced), at(healthy), at(healthy), synced - req, healthy - synced, healthy - start}}, "", "  ")
	return string(out)
}

// lookupNode is the workflow and node a sync-and-wait template names,
// parsed as the server parses a request.
func lookupNode(t testing.TB, k *pt.Kube, tmpl map[string]any) (workflowRef, string) {
	t.Helper()
	wf, _, c, err := parseRequest(k.Body(tmpl))
	if err != nil {
		t.Fatal(err)
	}
	return wf, c.Node
}

// peakRSS is the process's peak resident set (Linux), its fakes included.
func peakRSS() string {
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// heapObjects is the bytes of heap objects, live or not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
