//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/executor"
)

// ---- make e2e-scale (issue 24, item 3): where it stops scaling.
//
// TestScale deploys and tears down the synthetic platform of
// scalegen_test.go for every N of E2E_SCALE_N (a comma list; the test is
// skipped without it) and every step mode of E2E_SCALE_MODES (default
// "plugin,pod"), through the Quickstart's generate and apply blocks and
// `argo submit --from workflowtemplate/…`, and records per run: makespan
// against the critical path (the apps deploy ConfigMaps, so the path has no
// readiness delay: every second of it is overhead), the workflow-controller's
// and Argo CD's CPU and peak memory (host processes, /proc), the sizes of
// the deploy WorkflowTemplate and of the Workflow object as the API serves
// them, and what broke first. It is not part of `make e2e`.

type scaleRow struct {
	n                    int
	mode                 string
	result               string // "ok" or what broke
	makespan, teardown   time.Duration
	pending              time.Duration // the deploy's creation to its start (Argo's validation of a new Workflow)
	perEdge              time.Duration // makespan / critical path length
	dispatch, node       time.Duration // along the measured critical chain, per node
	wtBytes, wfBytes     int
	compressed           bool
	offloaded            bool               // Argo offloaded status.nodes to its database (E2E_OFFLOAD=1)
	cpu                  map[string]float64 // seconds of CPU during deploy+teardown
	rss                  map[string]int64   // peak RSS in KiB during the run
	depth, edges, nodesN int
	pods                 int // the deploy's Pod nodes: in pod mode, the step pods it created (retries included)
}

func scaleEnv(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func TestScale(t *testing.T) {
	ns := os.Getenv("E2E_SCALE_N")
	if ns == "" {
		t.Skip("E2E_SCALE_N not set (make e2e-scale N=100,300)")
	}
	h := newHarness(t)
	modes := strings.Split(os.Getenv("E2E_SCALE_MODES"), ",")
	if modes[0] == "" {
		modes = []string{"plugin", "pod"}
	}
	kind := os.Getenv("E2E_SCALE_KIND")
	if kind == "" {
		kind = "configmap"
	}
	work := filepath.Join(h.state, "scale")
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	var rows []scaleRow
	summary := func() string {
		s := scaleTable(rows)
		_ = os.WriteFile(filepath.Join(h.state, "logs", "scale-summary.txt"), []byte(s), 0o644)
		return s
	}
	prepared := false
	for _, f := range strings.Split(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("E2E_SCALE_N: %q is not a number", f)
		}
		for _, mode := range modes {
			g := scaleGen{Apps: n, Depth: scaleEnv("E2E_SCALE_DEPTH", 10), FanIn: scaleEnv("E2E_SCALE_FANIN", 2),
				Kind: kind, StepMode: mode, Parallelism: scaleEnv("E2E_SCALE_PARALLELISM", 50)}
			row, err := scaleRun(h, g, filepath.Join(work, fmt.Sprintf("%d-%s", n, mode)), !prepared)
			prepared = prepared || row.result != "prepare"
			rows = append(rows, row)
			fmt.Printf("--- scale %d %s: %s\n", n, mode, row.result)
			fmt.Print(summary()) // so far: a run cut short keeps its rows
			if err != nil {
				t.Errorf("scale %d %s: %v", n, mode, err)
			}
		}
	}
	fmt.Print(summary())
}

// scaleRun deploys and tears down one synthetic platform.
func scaleRun(h *harness, g scaleGen, dir string, prepare bool) (row scaleRow, err error) {
	row = scaleRow{n: g.Apps, mode: g.StepMode, depth: g.Depth, edges: g.edges(), cpu: map[string]float64{}, rss: map[string]int64{}}
	if scaleInline() {
		row.mode += " inline"
	}
	defer func() {
		if err != nil && row.result == "" {
			row.result = "FAIL: " + firstLine(err.Error(), 300)
		}
	}()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return row, err
	}
	spec, err := g.spec()
	if err != nil {
		return row, err
	}
	specFile := filepath.Join(dir, "platform.yaml")
	if err := os.WriteFile(specFile, spec, 0o600); err != nil {
		return row, err
	}
	if err := scaleCommit(h, g); err != nil {
		return row, fmt.Errorf("git: %w", err)
	}
	s := &scenario{h: h, p: &platform{Name: g.name()}}
	qs, err := docBlocks(filepath.Join(h.repo, "docs", "quickstart.md"))
	if err != nil {
		return row, err
	}
	settings, err := withSettings(qs["settings"], map[string]string{
		"SPEC": specFile, "PLATFORM": g.name(), "ARGOCD_URL": argocdURL, "ARGOCD_CA": filepath.Join(h.state, "pki", "ca.crt"),
		"ARGOCD_NS": argocdNS, "WF_NS": argoNS, "TOKEN_SECRET": "deployctl-argocd-token", "CA_SECRET": "argocd-ca",
	})
	if err != nil {
		return row, err
	}
	blocks := []string{qs["generate"], qs["apply"]}
	if prepare {
		blocks = append(blocks, qs["token"], qs["secrets"])
	}
	if out, err := h.runDoc(dir, settings, blocks); err != nil {
		row.result = "generate/apply: " + firstLine(lastLines(out, 3), 300)
		return row, err
	}
	if wt, err := h.kubectl("-n", argoNS, "get", "workflowtemplate", s.deployTemplate(), "-o", "json"); err == nil {
		row.wtBytes = compactSize(wt)
	}
	// The apps' namespace exists before the first sync: with
	// CreateNamespace=true, Argo CD apps of the first level syncing at once
	// race to create it, and a loser's sync fails ("namespaces \"scale\"
	// already exists": the 750-app run on ffad799, app a0052).
	if _, err := h.kubectl("get", "namespace", scaleNS); err != nil {
		if _, err := h.kubectl("create", "namespace", scaleNS); err != nil {
			return row, fmt.Errorf("namespace %s: %w", scaleNS, err)
		}
	}
	mon := watchProcs(h.state)
	t0 := time.Now()
	w, err := scaleSubmit(h, dir, s.deployTemplate(), "")
	if err != nil {
		mon.stop(&row)
		return row, err
	}
	raw, _ := h.kubectl("-n", argoNS, "get", "workflow", w.Metadata.Name, "-o", "json")
	row.wfBytes = compactSize(raw)
	var created struct {
		Metadata struct {
			CreationTimestamp time.Time
			UID               string
		}
		Status struct {
			OffloadNodeStatusVersion string `json:"offloadNodeStatusVersion"`
		}
	}
	if json.Unmarshal([]byte(raw), &created) == nil && !created.Metadata.CreationTimestamp.IsZero() && w.Status.StartedAt != nil {
		row.pending = w.Status.StartedAt.Sub(created.Metadata.CreationTimestamp)
	}
	row.offloaded = created.Status.OffloadNodeStatusVersion != ""
	nodes, compressed, err := scaleNodes(raw)
	if err == nil && row.offloaded {
		// Not fatal: the run's own result stands, and the teardown still runs.
		var oerr error
		if nodes, oerr = offloadedNodes(h, created.Metadata.UID, created.Status.OffloadNodeStatusVersion); oerr != nil {
			fmt.Printf("--- scale %d %s: %v\n", g.Apps, row.mode, oerr)
		}
	}
	if err != nil {
		mon.stop(&row)
		return row, err
	}
	row.compressed = compressed
	row.nodesN = len(nodes)
	for _, n := range nodes {
		if n.Type == "Pod" {
			row.pods++
		}
	}
	if w.Status.Phase != "Succeeded" {
		mon.stop(&row)
		row.result = fmt.Sprintf("deploy %s %s: %s", w.Metadata.Name, w.Status.Phase, firstLine(w.Status.Message, 300))
		return row, fmt.Errorf("%s", row.result)
	}
	row.makespan = w.Status.FinishedAt.Sub(w.Status.StartedAt.Time)
	row.perEdge = row.makespan / time.Duration(g.Depth)
	row.dispatch, row.node = criticalChain(nodes, w.Status.StartedAt.Time, g.depsOf)
	deployed := time.Since(t0)
	// The deploy's row before the teardown starts (CPU and memory come
	// after it): a hold that ends during a long teardown keeps it.
	fmt.Printf("--- scale %d %s: deployed\n%s", g.Apps, row.mode, scaleTable([]scaleRow{row}))
	tw, err := scaleSubmit(h, dir, s.teardownTemplate(), "Succeeded", "confirm="+g.name())
	mon.stop(&row)
	if err != nil {
		row.result = "teardown: " + firstLine(err.Error(), 300)
		return row, err
	}
	row.teardown = tw.Status.FinishedAt.Sub(tw.Status.StartedAt.Time)
	apps, err := h.applications()
	if err != nil {
		return row, err
	}
	left := 0
	for name := range apps {
		if strings.HasPrefix(name, "a") && len(name) == 5 {
			left++
		}
	}
	if left > 0 {
		row.result = fmt.Sprintf("teardown left %d Applications", left)
		return row, fmt.Errorf("%s", row.result)
	}
	row.result = fmt.Sprintf("ok (deploy+collect %s)", sec(deployed))
	return row, nil
}

// scaleSubmit creates a Workflow of template (params "name=value") as
// deployctl's executor does, through the API, and waits for it to end
// (want, if not empty, the phase it must end in). Not `argo submit`: without
// an Argo server the CLI validates the Workflow itself and fetches the
// ClusterWorkflowTemplate of every task twice, uncached, at client-go's
// default 5 requests per second: about 0.4 s per app (300 apps: 606 GETs,
// about 2 minutes; 600 apps passed the harness's 2-minute timeout).
func scaleSubmit(h *harness, dir, template, want string, params ...string) (*workflow, error) {
	var ps []map[string]string
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		ps = append(ps, map[string]string{"name": k, "value": v})
	}
	wf := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
		"metadata": map[string]any{"generateName": template + "-", "namespace": argoNS,
			"labels": map[string]string{"workflows.argoproj.io/workflow-template": template}},
		"spec": map[string]any{"workflowTemplateRef": map[string]string{"name": template}},
	}
	if len(ps) > 0 {
		wf["spec"].(map[string]any)["arguments"] = map[string]any{"parameters": ps}
	}
	b, err := json.Marshal(wf)
	if err != nil {
		return nil, err
	}
	if scaleInline() {
		if b, err = inlineRun(h, template, b); err != nil {
			return nil, err
		}
	}
	f := filepath.Join(dir, template+"-run.json")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		return nil, err
	}
	out, err := h.kubectl("create", "-f", f, "-o", "name")
	if err != nil {
		return nil, err
	}
	w, err := h.waitWorkflow(strings.TrimPrefix(strings.TrimSpace(out), "workflow.argoproj.io/"), 120*time.Minute)
	if err != nil {
		return w, err
	}
	if want != "" && w.Status.Phase != want {
		return w, fmt.Errorf("%s: want %s, got %s", template, want, w.describeWith(h.stepLogs(w)))
	}
	return w, nil
}

// scaleInline (E2E_SCALE_INLINE=1) submits the Workflows with the
// WorkflowTemplate's spec inline instead of a workflowTemplateRef, as the
// executor does with WORKFLOW_SUBMIT=inline (the same code:
// executor.Inline). Argo v4.0.7 then keeps the deploy DAG once (in spec)
// instead of twice (status.storedWorkflowTemplateSpec and
// status.storedTemplates hold only what a workflowTemplateRef resolves:
// workflow/controller/operator.go setExecWorkflow, and
// resolveTemplateReference in workflow_types.go, which stores no template
// a Workflow calls in itself).
func scaleInline() bool { return os.Getenv("E2E_SCALE_INLINE") == "1" }

// inlineRun is the Workflow run (JSON, a workflowTemplateRef to template
// and its parameters) with the WorkflowTemplate's spec inline, the
// template as the API serves it: executor.Inline, what the executor
// submits with WORKFLOW_SUBMIT=inline.
func inlineRun(h *harness, template string, run []byte) ([]byte, error) {
	raw, err := h.kubectl("-n", argoNS, "get", "workflowtemplate", template, "-o", "json")
	if err != nil {
		return nil, err
	}
	var wt wfv1.WorkflowTemplate
	if err := json.Unmarshal([]byte(raw), &wt); err != nil {
		return nil, fmt.Errorf("workflowtemplate %s: %w", template, err)
	}
	var w wfv1.Workflow
	if err := json.Unmarshal(run, &w); err != nil {
		return nil, err
	}
	in, err := executor.Inline(&w, &wt)
	if err != nil {
		return nil, err
	}
	return json.Marshal(in)
}

// compactSize is the size of kubectl's JSON without its indentation: what
// the API stores and Argo weighs against its limit.
func compactSize(s string) int {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return len(s)
	}
	return b.Len()
}

// scaleCommit puts the synthetic apps in the harness's Git repository
// (replacing an earlier size's).
func scaleCommit(h *harness, g scaleGen) error {
	work := filepath.Join(h.state, "git", "work")
	_ = os.RemoveAll(filepath.Join(work, scaleGitDir))
	files, err := g.manifests()
	if err != nil {
		return err
	}
	for p, b := range files {
		f := filepath.Join(work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return err
		}
	}
	env := []string{"-c", "user.name=e2e", "-c", "user.email=e2e@deployctl.invalid", "-c", "commit.gpgsign=false"}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", fmt.Sprintf("e2e: synthetic platform, %d apps", g.Apps), "--allow-empty"}, {"push", "-q", "origin", "main"}} {
		if _, err := h.run(2*time.Minute, work, "git", append(env, args...)...); err != nil {
			return err
		}
	}
	return nil
}

// scaleNodes reads a Workflow's nodes, from status.compressedNodes when
// Argo compressed them (gzip, base64: Argo's file.CompressEncodeString).
func scaleNodes(raw string) (map[string]wfNode, bool, error) {
	var w struct {
		Status struct {
			Nodes           map[string]wfNode
			CompressedNodes string `json:"compressedNodes"`
		}
	}
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		return nil, false, err
	}
	if w.Status.CompressedNodes == "" {
		return w.Status.Nodes, false, nil
	}
	z, err := base64.StdEncoding.DecodeString(w.Status.CompressedNodes)
	if err != nil {
		return nil, true, err
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, true, err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, true, err
	}
	var nodes map[string]wfNode
	return nodes, true, json.Unmarshal(b, &nodes)
}

// offloadedNodes are a Workflow's nodes from Argo's offload table
// (E2E_OFFLOAD=1: offload.sh's PostgreSQL; persist/sqldb's argo_workflows,
// one row per uid and version), read with psql as the package's postgres
// user over the instance's socket, as offload.sh does.
func offloadedNodes(h *harness, uid, version string) (map[string]wfNode, error) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/psql")
	if len(bins) == 0 || !regexp.MustCompile(`^[A-Za-z0-9:-]+$`).MatchString(uid+version) {
		return nil, fmt.Errorf("offloaded nodes of %s: no psql, or an unexpected uid/version %q/%q", uid, uid, version)
	}
	port := os.Getenv("E2E_PG_PORT")
	if port == "" {
		port = "15432"
	}
	q := fmt.Sprintf("select nodes from argo_workflows where uid = '%s' and version = '%s'", uid, version)
	out, err := h.run(2*time.Minute, h.state, "setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--",
		bins[len(bins)-1], "-h", filepath.Join(h.state, "postgres", "sock"), "-p", port, "-U", "postgres", "-d", "argo", "-qAt", "-c", q)
	if err != nil {
		return nil, fmt.Errorf("offloaded nodes of %s: %w", uid, err)
	}
	var nodes map[string]wfNode
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &nodes); err != nil || len(nodes) == 0 {
		return nil, fmt.Errorf("offloaded nodes of %s version %s: %d read (%v)", uid, version, len(nodes), err)
	}
	return nodes, nil
}

// criticalChain walks back from the app node that finished last, each time
// to the dependency (deps, the generator's edges) that finished last (the
// one it waited for), and returns the mean dispatch gap (dependency
// finished → node started) and the mean node duration along it.
func criticalChain(nodes map[string]wfNode, start time.Time, deps func(app string) []string) (dispatch, node time.Duration) {
	byApp := map[string]wfNode{}
	for _, n := range nodes {
		if n.template() != syncTmpl || n.Type != "Retry" && n.Type != "Pod" && n.Type != "Plugin" || n.StartedAt == nil || n.FinishedAt == nil {
			continue
		}
		app := n.param("app")
		if cur, ok := byApp[app]; ok && cur.Type == "Retry" {
			continue
		}
		byApp[app] = n
	}
	cur := ""
	for app, n := range byApp {
		if cur == "" || n.FinishedAt.After(byApp[cur].FinishedAt.Time) || n.FinishedAt.Equal(byApp[cur].FinishedAt.Time) && app < cur {
			cur = app
		}
	}
	if cur == "" {
		return 0, 0
	}
	var gaps, durs []time.Duration
	for {
		n := byApp[cur]
		durs = append(durs, n.FinishedAt.Sub(n.StartedAt.Time))
		prev := ""
		for _, d := range deps(cur) {
			if _, ok := byApp[d]; ok && (prev == "" || byApp[d].FinishedAt.After(byApp[prev].FinishedAt.Time)) {
				prev = d
			}
		}
		if prev == "" {
			gaps = append(gaps, n.StartedAt.Sub(start))
			break
		}
		gaps = append(gaps, n.StartedAt.Sub(byApp[prev].FinishedAt.Time))
		cur = prev
	}
	return mean(gaps), mean(durs)
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s / time.Duration(len(ds))
}

// ---- the controllers' CPU and memory (host processes: /proc/<pid>)

var scaleProcs = []string{"workflow-controller", "argocd-application-controller", "argocd-server", "argocd-repo-server"}

type procMon struct {
	state string
	quit  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	cpu0  map[string]float64
	rss   map[string]int64
}

func procPid(state, name string) int {
	b, err := os.ReadFile(filepath.Join(state, "run", name+".pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// procCPU: utime+stime of a process in seconds (USER_HZ is 100 on Linux).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}

func procRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func watchProcs(state string) *procMon {
	m := &procMon{state: state, quit: make(chan struct{}), done: make(chan struct{}), cpu0: map[string]float64{}, rss: map[string]int64{}}
	for _, p := range scaleProcs {
		m.cpu0[p] = procCPU(procPid(state, p))
	}
	go func() {
		defer close(m.done)
		for {
			m.mu.Lock()
			for _, p := range scaleProcs {
				m.rss[p] = max(m.rss[p], procRSS(procPid(state, p)))
			}
			m.mu.Unlock()
			select {
			case <-m.quit:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return m
}

func (m *procMon) stop(row *scaleRow) {
	close(m.quit)
	<-m.done
	for _, p := range scaleProcs {
		row.cpu[p] = procCPU(procPid(m.state, p)) - m.cpu0[p]
		row.rss[p] = m.rss[p]
	}
}

func scaleTable(rows []scaleRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%5s %-13s %4s %5s %8s %9s %9s %8s %8s %8s %9s %11s %5s %5s %13s %13s %s\n",
		"N", "mode", "dep", "edges", "pending", "makespan", "per-edge", "dispatch", "node", "teardown", "WT-bytes", "WF-bytes", "nodes", "pods", "wf-ctl cpu/MiB", "argocd cpu/MiB", "result")
	for _, r := range rows {
		acpu, arss := 0.0, int64(0)
		for _, p := range scaleProcs[1:] {
			acpu += r.cpu[p]
			arss += r.rss[p]
		}
		comp := ""
		if r.compressed {
			comp = "z"
		}
		if r.offloaded {
			comp = "o"
		}
		fmt.Fprintf(&b, "%5d %-13s %4d %5d %8s %9s %9s %8s %8s %8s %9d %10d%1s %5d %5d %6.0fs/%4d %6.0fs/%4d %s\n",
			r.n, r.mode, r.depth, r.edges, sec(r.pending), sec(r.makespan), sec(r.perEdge), sec(r.dispatch), sec(r.node), sec(r.teardown),
			r.wtBytes, r.wfBytes, comp, r.nodesN, r.pods, r.cpu[scaleProcs[0]], r.rss[scaleProcs[0]]/1024, acpu, arss/1024, r.result)
	}
	b.WriteString("pending = the deploy's creation to its start; per-edge = makespan / critical path (depth) apps; dispatch, node = means along the measured critical chain; z = Argo compressed status.nodes, o = offloaded them to its database; cpu = seconds during deploy+teardown, MiB = peak RSS (argocd = server+repo-server+application-controller)\n")
	return b.String()
}
