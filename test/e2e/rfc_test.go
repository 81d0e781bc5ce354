//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// ---- 14: the RFC's 41-app platform, where order matters, side by side
// with sync waves (issue 24). The stand-in is rfcfixture_test.go's.
//
//  a. the edges are real: plan --explain-edges --manifests holds the spec
//     (exit 0) and catches a dropped edge (exit 3, naming it); the import
//     of the app-of-apps orders every pair the hand-written graph orders;
//  b. Argo CD alone with the RFC's app-of-apps and waves (-30…+50) and the
//     Application health check owners install: what it did, recorded;
//  c. deployctl deploy (the Quickstart's executor block) in plugin mode:
//     0 order violations or the step fails, makespan, and the plan's
//     prediction from the run's own report; validate on the 41 apps;
//  d. deployctl's teardown of it: nothing left but the retained volumes
//     (SC-4);
//  e. pod mode: with E2E_RFC_POD=1 a clean measured run; then SC-3, one
//     operator broken: the deploy fails there alone, fixed and resumed,
//     only it and its dependents run.
//
// One table: system · violations · retries · makespan · predicted · pods.

// rfcAloneCap: how long Argo CD alone is watched (E2E_RFC_ALONE_CAP, a
// Go duration, overrides it).
var rfcAloneCap = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("E2E_RFC_ALONE_CAP")); err == nil && d > 0 {
		return d
	}
	return 2 * time.Minute
}()

// rfcDroppedEdge: a dependsOn entry whose mechanism is a CRD (Kafka).
const rfcDroppedEdge = "kafka-cluster->strimzi-operator"

type rfcRow struct {
	system     string
	violations int
	retries    int
	converged  bool
	makespan   time.Duration
	predicted  string
	pods       int
	detail     string
}

type rfcRun struct {
	s       *scenario // the rfc platform's scenario (its own platform)
	ref     *rfcRef
	work    string
	gitWork string
}

func (s *scenario) rfcPlatform() (detail string, err error) {
	h, t0 := s.h, time.Now()
	if s.qs == nil {
		if err := s.quickstart(); err != nil {
			return "", err
		}
	}
	ref, err := loadRFCRef(filepath.Join(h.repo, "examples", "reference-platform.yaml"))
	if err != nil {
		return "", err
	}
	work := filepath.Join(h.state, "rfc")
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return "", err
	}
	r := &rfcRun{ref: ref, work: work, gitWork: filepath.Join(h.state, "git", "work")}
	tls, err := newWebhookTLS()
	if err != nil {
		return "", err
	}
	if err := ref.write(r.gitWork, filepath.Join(work, "manifests"), filepath.Join(h.state, "pv"), tls); err != nil {
		return "", err
	}
	if err := r.commit(h); err != nil {
		return "", err
	}
	specs, err := rfcWriteSpecs(ref, work)
	if err != nil {
		return "", err
	}
	p, err := ref.platform(specs["pod"])
	if err != nil {
		return "", err
	}
	if len(p.Apps) != 41 {
		return "", fmt.Errorf("the stand-in has %d apps, want the reference's 41", len(p.Apps))
	}
	r.s = &scenario{h: h, p: p, qs: s.qs}

	// a. The edges are real.
	edges, err := r.edgeProof(specs)
	if err != nil {
		return "", err
	}
	defer func() {
		t0 := time.Now()
		if cerr := r.cleanup(); cerr != nil && err == nil {
			err = fmt.Errorf("clean-up: %w", cerr)
		}
		if err == nil {
			detail += ", clean-up " + sec(time.Since(t0))
		}
	}()
	if err := r.reset(); err != nil {
		return "", fmt.Errorf("reset: %w", err)
	}

	// b. Argo CD alone.
	var notes []string
	phase := func(name string, t0 time.Time) {
		notes = append(notes, fmt.Sprintf("%s %s", name, sec(time.Since(t0))))
	}
	phase("stand-in, edge proof, first reset", t0)
	t0 = time.Now()
	var rows []rfcRow
	// What the cluster held before Argo CD alone: its reset must leave
	// nothing more (checked over every listable kind).
	nsBefore, err := r.presentNamespaces()
	if err != nil {
		return "", err
	}
	invBefore, err := r.inventory()
	if err != nil {
		return "", err
	}
	alone, err := r.argoAlone()
	if err != nil {
		return "", fmt.Errorf("Argo CD alone: %w", err)
	}
	rows = append(rows, alone)
	phase("Argo CD alone", t0)
	t0 = time.Now()
	if err := r.clear(nsBefore); err != nil {
		return "", fmt.Errorf("reset after Argo CD alone: %w", err)
	}
	invAfter, err := r.inventory()
	if err != nil {
		return "", err
	}
	if added := setMinus(invAfter, invBefore); len(added) > 0 {
		return "", fmt.Errorf("reset after Argo CD alone: %d objects the cluster did not hold before it: %s", len(added), strings.Join(head(added, 10), "; "))
	}
	phase(fmt.Sprintf("its reset (%d objects before, %d after, 0 added)", len(invBefore), len(invAfter)), t0)

	// c. deployctl, plugin mode (measured), validate on the 41 apps, then
	// (d) its teardown: nothing left but the retained volumes (SC-4).
	t0 = time.Now()
	row, err := r.deployctl("plugin", specs["plugin"])
	rows = append(rows, row)
	if err != nil {
		fmt.Print(rfcTable(rows))
		return "", fmt.Errorf("deployctl plugin mode: %w", err)
	}
	phase("plugin deploy", t0)
	t0 = time.Now()
	val, err := r.validate()
	if err != nil {
		return "", err
	}
	phase("validate", t0)
	t0 = time.Now()
	td, err := r.teardown()
	if err != nil {
		return "", err
	}
	phase("teardown", t0)
	t0 = time.Now()
	if err := r.reset(); err != nil {
		return "", fmt.Errorf("reset after the teardown: %w", err)
	}
	phase("reset", t0)
	// A further deploy measured as in c., then a reset.
	measured := func(system, mode, spec, what string) error {
		t0 := time.Now()
		row, err := r.deployctl(mode, spec)
		if system != "" {
			row.system = system
		}
		rows = append(rows, row)
		if err != nil {
			fmt.Print(rfcTable(rows))
			return fmt.Errorf("deployctl, %s: %w", what, err)
		}
		if err := r.reset(); err != nil {
			return fmt.Errorf("reset after %s: %w", what, err)
		}
		phase(what+" deploy+reset", t0)
		return nil
	}
	// The import path deployed: opt-in (CI time, test/e2e/README.md).
	if os.Getenv("E2E_RFC_IMPORT") != "" {
		spec, err := r.importedSpec("plugin")
		if err != nil {
			return "", err
		}
		if err := measured("deployctl, imported spec", "plugin", spec, "imported"); err != nil {
			return "", err
		}
	}
	// Pod mode, the clean measured run: opt-in (CI time, test/e2e/README.md).
	if os.Getenv("E2E_RFC_POD") != "" {
		if err := measured("", "pod", specs["pod"], "pod"); err != nil {
			return "", err
		}
	}
	// e. SC-3 in pod mode: one operator broken, the deploy fails there,
	// fixed, resumed (whose templates stay applied for the steps after
	// this one; the clean-up removes its deploy).
	t0 = time.Now()
	row, err = r.failAndResume("pod", specs["pod"], rfcBroken)
	rows = append(rows, row)
	if err != nil {
		fmt.Print(rfcTable(rows))
		return "", fmt.Errorf("deployctl pod mode, %s broken then resumed: %w", rfcBroken, err)
	}
	phase("pod fail+resume", t0)
	table := rfcTable(rows)
	fmt.Print(table)
	_ = os.WriteFile(filepath.Join(h.state, "logs", "rfc-side-by-side.txt"), []byte(table), 0o644)
	var parts []string
	for _, row := range rows {
		parts = append(parts, fmt.Sprintf("%s: %d violations, %d retries, makespan %s, predicted %s, %d pods (%s)",
			row.system, row.violations, row.retries, sec(row.makespan), row.predicted, row.pods, row.detail))
	}
	return fmt.Sprintf("%s | %s | %s | %s | phases: %s", edges, strings.Join(parts, " | "), val, td, strings.Join(notes, ", ")), nil
}

// commit records the stand-in in the harness's Git repository.
func (r *rfcRun) commit(h *harness) error {
	env := []string{"-c", "user.name=e2e", "-c", "user.email=e2e@deployctl.invalid", "-c", "commit.gpgsign=false"}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "e2e: the RFC platform's stand-in", "--allow-empty"}, {"push", "-q", "origin", "main"}} {
		if _, err := h.run(time.Minute, r.gitWork, "git", append(env, args...)...); err != nil {
			return err
		}
	}
	return nil
}

// edgeProof: the spec's dependsOn hold against what the stand-in deploys,
// and one dropped edge is caught before anything runs.
func (r *rfcRun) edgeProof(specs map[string]string) (string, error) {
	h := r.s.h
	bin, err := h.deployctlDir()
	if err != nil {
		return "", err
	}
	out, err := rfcExplainEdges(filepath.Join(bin, "deployctl"), specs, filepath.Join(r.work, "manifests"))
	_ = os.WriteFile(filepath.Join(h.state, "logs", "rfc-explain-edges.txt"), []byte(out), 0o644)
	if err != nil {
		return "", err
	}
	imp, err := rfcImportProof(filepath.Join(bin, "deployctl"), filepath.Join(r.gitWork, rfcGitPrefix), filepath.Join(r.work, "manifests"), specs["pod"], r.work)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("plan --explain-edges --manifests: the spec holds (exit 0), without %s exit 3 naming it; %s", rfcDroppedEdge, imp), nil
}

// ---- what Argo CD recorded, followed live

type appEvent struct {
	Metadata struct {
		Name              string
		CreationTimestamp kTime `json:"creationTimestamp"`
	}
	Status struct {
		Sync   struct{ Status string }
		Health struct {
			Status             string
			LastTransitionTime *kTime `json:"lastTransitionTime"`
		}
		OperationState *struct {
			Phase      string
			Message    string
			RetryCount int    `json:"retryCount"`
			StartedAt  *kTime `json:"startedAt"`
		} `json:"operationState"`
	}
}

// opWatch follows every Application: per app its first sync start, its
// first Healthy+Synced (Argo CD's transition time), the sync operations
// that failed and the retries Argo CD made.
type opWatch struct {
	mu           sync.Mutex
	since        time.Time
	created      map[string]time.Time
	firstStart   map[string]time.Time
	firstHealthy map[string]time.Time
	failedOps    map[string]map[string]string // app -> op start -> message
	retries      map[string]int
	cmd          *exec.Cmd
	done         chan struct{}
}

func (h *harness) watchOps(since time.Time) (*opWatch, error) {
	w := &opWatch{since: since.Add(-time.Second), created: map[string]time.Time{}, firstStart: map[string]time.Time{},
		firstHealthy: map[string]time.Time{}, failedOps: map[string]map[string]string{}, retries: map[string]int{}, done: make(chan struct{})}
	var err error
	w.cmd, err = h.watchApplications(w.done, func(_ string, raw json.RawMessage) {
		var a appEvent
		if json.Unmarshal(raw, &a) == nil {
			w.record(a)
		}
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (w *opWatch) record(a appEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := a.Metadata.Name
	if a.Metadata.CreationTimestamp.Before(w.since) {
		return // not of this run
	}
	if _, ok := w.created[n]; !ok {
		w.created[n] = a.Metadata.CreationTimestamp.Time
	}
	if op := a.Status.OperationState; op != nil && op.StartedAt != nil && !op.StartedAt.Before(w.since) {
		if t, ok := w.firstStart[n]; !ok || op.StartedAt.Before(t) {
			w.firstStart[n] = op.StartedAt.Time
		}
		if op.Phase == "Failed" || op.Phase == "Error" {
			if w.failedOps[n] == nil {
				w.failedOps[n] = map[string]string{}
			}
			w.failedOps[n][op.StartedAt.Format(time.RFC3339)+"#"+fmt.Sprint(op.RetryCount)] = op.Message
		}
		if op.RetryCount > w.retries[n] {
			w.retries[n] = op.RetryCount
		}
	}
	if _, ok := w.firstHealthy[n]; !ok && a.Status.Health.Status == "Healthy" && a.Status.Sync.Status == "Synced" {
		if _, started := w.firstStart[n]; started {
			t := time.Now()
			if lt := a.Status.Health.LastTransitionTime; lt != nil && !lt.Before(w.since) {
				t = lt.Time
			}
			w.firstHealthy[n] = t
		}
	}
}

func (w *opWatch) stop() {
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
	<-w.done
}

// violations: each edge a→b of p whose b began syncing before a was first
// Healthy, or whose a never was.
func (w *opWatch) violations(p *platform) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, b := range p.Apps {
		sb, ok := w.firstStart[b]
		if !ok {
			continue
		}
		for _, a := range p.Deps[b] {
			ha, ok := w.firstHealthy[a]
			if !ok {
				out = append(out, fmt.Sprintf("%s synced at %s, %s never Healthy", b, sb.Format(time.TimeOnly), a))
			} else if sb.Before(ha) {
				out = append(out, fmt.Sprintf("%s synced at %s, %s Healthy only at %s", b, sb.Format(time.TimeOnly), a, ha.Format(time.TimeOnly)))
			}
		}
	}
	return out
}

// failures: Argo CD's sync operations that failed (each retry counted), and
// the retries it made.
func (w *opWatch) failures() (int, int, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, r := 0, 0
	var ex []string
	for _, app := range keys(w.failedOps) {
		n += len(w.failedOps[app])
		for _, k := range keys(w.failedOps[app]) {
			if len(ex) < 3 {
				ex = append(ex, app+": "+firstLine(w.failedOps[app][k], 140))
			}
		}
	}
	for _, c := range w.retries {
		r += c
	}
	return n, r, ex
}

func firstLine(s string, n int) string {
	s = strings.SplitN(s, "\n", 2)[0]
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// ---- b. Argo CD alone

// argoAlone applies the RFC app-of-apps' root and waits for every app, as
// its owners run it: the Application health check and the kinds' checks
// in argocd-cm, automated sync with retries on each app.
func (r *rfcRun) argoAlone() (rfcRow, error) {
	h := r.s.h
	row := rfcRow{system: "Argo CD alone, sync waves", predicted: "-"}
	data := r.ref.healthKeys()
	data[appHealthKey] = appHealthLua
	patch, _ := json.Marshal(map[string]any{"data": data})
	if _, err := h.kubectl("-n", argocdNS, "patch", "configmap", "argocd-cm", "--type=merge", "-p", string(patch)); err != nil {
		return row, err
	}
	t0 := time.Now()
	w, err := h.watchOps(t0)
	if err != nil {
		return row, err
	}
	if _, err := h.kubectl("apply", "-f", filepath.Join(r.gitWork, rfcGitPrefix, "root.yaml")); err != nil {
		w.stop()
		return row, err
	}
	all := append(append([]string{rfcRoot}, r.stackNames()...), r.s.p.Apps...)
	var end time.Time
	// CI time: 2 minutes. Undisturbed it needed 139 s (60d6a69), so this
	// cap records what it did and how far it got, not whether it would
	// converge; the runs with a longer cap are in docs/measurements.md.
	werr := h.waitFor("Argo CD alone: every Application of the RFC app-of-apps Healthy and Synced", rfcAloneCap, func() (bool, error) {
		apps, err := h.applications()
		if err != nil {
			return false, err
		}
		var bad []string
		for _, n := range all {
			a, ok := apps[n]
			if !ok || a.Status.Health.Status != "Healthy" || a.Status.Sync.Status != "Synced" {
				bad = append(bad, fmt.Sprintf("%s=%s/%s", n, a.Status.Health.Status, a.Status.Sync.Status))
			}
		}
		end = time.Now()
		return len(bad) == 0, fmt.Errorf("%d not Healthy+Synced: %s", len(bad), strings.Join(bad, " "))
	})
	time.Sleep(2 * time.Second) // the watch's last events
	w.stop()
	row.converged = werr == nil
	row.makespan = end.Sub(t0)
	v := w.violations(r.s.p)
	row.violations = len(v)
	failed, retries, ex := w.failures()
	row.retries = failed
	row.detail = fmt.Sprintf("converged without a hand within its %s cap: %v; %d failed sync operations, %d retries by Argo CD", sec(rfcAloneCap), row.converged, failed, retries)
	if werr != nil {
		row.detail += "; " + firstLine(werr.Error(), 400)
	}
	if len(ex) > 0 {
		row.detail += "; e.g. " + strings.Join(ex, "; ")
	}
	if len(v) > 0 {
		if len(v) > 4 {
			v = append(v[:4], fmt.Sprintf("+%d more", len(v)-4))
		}
		row.detail += "; violations: " + strings.Join(v, "; ")
	}
	return row, nil
}

func (r *rfcRun) stackNames() []string {
	var out []string
	for _, s := range r.ref.stacks {
		out = append(out, s.name)
	}
	return out
}

// ---- c. deployctl

// deployctl runs the Quickstart's generate and executor blocks with the
// mode's spec in a work directory of its own, then checks the order on
// Argo CD's and the Workflow's records (a violation fails the step) and
// asks the plan for the critical path under the run's measured durations.
func (r *rfcRun) deployctl(mode, spec string) (rfcRow, error) {
	s, h := r.s, r.s.h
	row := rfcRow{system: "deployctl, " + mode + " mode", predicted: "-"}
	// Its own work directory: "plugin", "pod", "imported-plugin" (the
	// imported spec's report must not replace the hand-written one's).
	work := filepath.Join(r.work, strings.TrimPrefix(strings.TrimSuffix(filepath.Base(spec), ".yaml"), "rfc-"))
	if err := os.MkdirAll(work, 0o700); err != nil {
		return row, err
	}
	settings, err := r.settings(spec)
	if err != nil {
		return row, err
	}
	before, err := s.runs(s.deployTemplate())
	if err != nil {
		return row, err
	}
	pods := h.countPods()
	t0 := time.Now()
	w0, err := h.watchOps(t0)
	if err != nil {
		pods.stop()
		return row, err
	}
	out, err := h.runDoc(work, settings, []string{s.qs["generate"], s.qs["executor"]}, "REPORT_DIR="+work)
	time.Sleep(2 * time.Second)
	w0.stop()
	pods.stop()
	if err != nil {
		return row, err
	}
	w, err := s.newRun(s.deployTemplate(), before)
	if err != nil {
		return row, err
	}
	row.makespan = w.Status.FinishedAt.Sub(w.Status.StartedAt.Time)
	row.pods = pods.steps(w.Metadata.Name) + pods.agents(w.Metadata.Name)
	if mode == "pod" {
		// podGC removes step pods as they end; the Pod nodes are the count.
		c := 0
		for _, n := range w.Status.Nodes {
			if n.Type == "Pod" {
				c++
			}
		}
		if c > row.pods {
			row.pods = c
		}
	}
	row.converged = w.Status.Phase == "Succeeded"
	if !row.converged {
		return row, fmt.Errorf("%s: %s\n%s", w.Metadata.Name, w.describeWith(h.stepLogs(w)), lastLines(out, 20))
	}
	failed, _, ex := w0.failures()
	attempts := 0
	for _, n := range w.Status.Nodes {
		if n.Type == "Retry" && len(n.Children) > 1 {
			attempts += len(n.Children) - 1
		}
	}
	row.retries = failed + attempts
	v := w0.violations(s.p)
	row.violations = len(v)
	apps, err := h.applications()
	if err != nil {
		return row, err
	}
	edges, overlaps, oerr := s.checkOrder(w, apps)
	if len(v) > 0 || oerr != nil {
		return row, fmt.Errorf("order violations in %s: %v %v", w.Metadata.Name, v, oerr)
	}
	row.predicted, err = r.predicted(spec, filepath.Join(work, "deployctl-report.json"))
	if err != nil {
		return row, err
	}
	// The order is held against the hand-written graph (s.p); the cost
	// is measured along the critical path of the graph that ran (the
	// imported one serializes its waves: 20 apps, not 9).
	own, err := r.ref.platform(spec)
	if err != nil {
		return row, err
	}
	c, cerr := (&scenario{h: h, p: own, qs: s.qs}).edgeCost(w, apps)
	row.detail = fmt.Sprintf("%s Succeeded; %d edges held (each sync after its dependencies' fresh Healthy and node end), %d independent pairs overlapped; %d failed syncs, %d step retries",
		w.Metadata.Name, edges, len(overlaps), failed, attempts)
	if cerr == nil {
		row.detail += fmt.Sprintf("; critical path of readiness delays (the spec's own graph, %d apps) %s = %s, overhead %s per critical edge", len(c.path), strings.Join(c.path, "->"), sec(c.delay), sec(c.overhead))
	}
	if len(ex) > 0 {
		row.detail += "; e.g. " + strings.Join(ex, "; ")
	}
	return row, nil
}

// importedSpec: what edgeProof's `deployctl import` of the app-of-apps
// wrote (imported.yaml), made to run here as the hand-written spec is
// (rfcRef.spec): this cluster's step image, Secrets, step timeouts and
// retries, the stand-in kinds' health checks. Its graph and its apps'
// fields (the Applications' syncPolicy among them) stay as imported.
func (r *rfcRun) importedSpec(mode string) (string, error) {
	in := filepath.Join(r.work, "imported.yaml")
	b, err := os.ReadFile(in)
	if err != nil {
		return "", err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", in, err)
	}
	spec, _ := doc["spec"].(map[string]any)
	argocd, _ := spec["argocd"].(map[string]any)
	wf, _ := spec["workflow"].(map[string]any)
	defaults, _ := spec["defaults"].(map[string]any)
	if argocd == nil || wf == nil || defaults == nil {
		return "", fmt.Errorf("%s: no spec.argocd, spec.workflow or spec.defaults", in)
	}
	argocd["caSecret"] = map[string]any{"name": "argocd-ca", "key": "ca.crt"}
	argocd["tokenSecret"] = map[string]any{"name": "deployctl-argocd-token", "key": "token"}
	wf["image"], wf["imagePullPolicy"], wf["stepMode"] = "local.test/deploystep:dev", "Never", mode
	rfcStepSettings(defaults)
	spec["healthCustomizations"] = rfcHealthCustomizations()
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	f := filepath.Join(r.work, "rfc-imported-"+mode+".yaml")
	return f, os.WriteFile(f, out, 0o600)
}

// settings: the Quickstart's settings block for spec on this cluster.
func (r *rfcRun) settings(spec string) (string, error) {
	s, h := r.s, r.s.h
	return withSettings(s.qs["settings"], map[string]string{
		"SPEC": spec, "PLATFORM": s.p.Name, "ARGOCD_URL": argocdURL, "ARGOCD_CA": filepath.Join(h.state, "pki", "ca.crt"),
		"ARGOCD_NS": argocdNS, "WF_NS": argoNS, "TOKEN_SECRET": "deployctl-argocd-token", "CA_SECRET": "argocd-ca",
	})
}

// ---- e. SC-3: a failure injected into one operator, resumed from there

// rfcBroken: the operator broken in SC-3. Its dependents cross stacks
// (redis-cluster in platform-data, harbor in developer-platform).
const rfcBroken = "redis-operator"

// breakApp commits app's controller as never ready, with a progress
// deadline of 15 s (Argo CD: Degraded), or puts it back.
func (r *rfcRun) breakApp(app string, broken bool) error {
	var path string
	for _, a := range r.ref.apps() {
		if a.name == app {
			path = a.path
		}
	}
	f := filepath.Join(r.gitWork, path, "manifests.yaml")
	b, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	good := [2]string{`- {name: NEVER_READY, value: "false"}`, "  replicas: 1\n"}
	bad := [2]string{`- {name: NEVER_READY, value: "true"}`, "  replicas: 1\n  progressDeadlineSeconds: 15\n"}
	from, to := good, bad
	if !broken {
		from, to = bad, good
	}
	m := string(b)
	for i := range from {
		if strings.Count(m, from[i]) != 1 {
			return fmt.Errorf("%s: want one %q", f, from[i])
		}
		m = strings.Replace(m, from[i], to[i], 1)
	}
	if err := os.WriteFile(f, []byte(m), 0o644); err != nil {
		return err
	}
	return r.commit(r.s.h)
}

// failAndResume: the Quickstart's executor with broken's controller never
// ready must fail at that node alone, its dependents never synced, the
// independent apps Healthy; with it fixed, the executor again resumes that
// run in place and runs only broken and its dependents; the order holds
// over both (Argo CD's records and the Workflow's).
func (r *rfcRun) failAndResume(mode, spec, broken string) (rfcRow, error) {
	s, h := r.s, r.s.h
	row := rfcRow{system: "deployctl, " + mode + " mode, SC-3", predicted: "-"}
	work := filepath.Join(r.work, mode+"-sc3")
	if err := os.MkdirAll(work, 0o700); err != nil {
		return row, err
	}
	settings, err := r.settings(spec)
	if err != nil {
		return row, err
	}
	if err := r.breakApp(broken, true); err != nil {
		return row, err
	}
	fixed := false
	defer func() {
		if !fixed {
			_ = r.breakApp(broken, false)
		}
	}()
	before, err := s.runs(s.deployTemplate())
	if err != nil {
		return row, err
	}
	w0, err := h.watchOps(time.Now())
	if err != nil {
		return row, err
	}
	stopped := false
	stop := func() {
		if !stopped {
			time.Sleep(2 * time.Second)
			w0.stop()
			stopped = true
		}
	}
	defer stop()
	out, derr := h.runDoc(work, settings, []string{s.qs["generate"], s.qs["executor"]}, "REPORT_DIR="+work)
	if derr == nil {
		return row, fmt.Errorf("the deploy with %s broken succeeded:\n%s", broken, lastLines(out, 10))
	}
	w, err := s.newRun(s.deployTemplate(), before)
	if err != nil {
		return row, err
	}
	if w.Status.Phase != "Failed" {
		return row, fmt.Errorf("%s: want Failed: %s", w.Metadata.Name, w.describeWith(h.stepLogs(w)))
	}
	if failed := w.failedApps(syncTmpl); len(failed) != 1 || failed[0] != broken {
		return row, fmt.Errorf("%s: failed nodes %v, want [%s]: %s", w.Metadata.Name, failed, broken, w.describeWith(h.stepLogs(w)))
	}
	leaf := failedLeafMessage(w, broken)
	if !strings.Contains(leaf, "Degraded") && !strings.Contains(leaf, "Progressing") {
		return row, fmt.Errorf("failed node %s says %q: no Argo CD health reason", broken, leaf)
	}
	apps, err := h.applications()
	if err != nil {
		return row, err
	}
	desc := s.p.descendants(broken)
	want := []string{broken}
	var errs []string
	for _, a := range s.p.Apps {
		ap, exists := apps[a]
		switch {
		case desc[a]:
			want = append(want, a)
			if exists && (ap.Status.OperationState != nil || len(ap.Status.History) > 0) {
				errs = append(errs, a+" (depends on "+broken+") has a sync operation")
			}
		case a == broken:
		default:
			if !exists || ap.Status.Health.Status != "Healthy" {
				errs = append(errs, fmt.Sprintf("independent %s not Healthy (%s)", a, ap.Status.Health.Status))
			}
		}
	}
	if len(errs) > 0 {
		return row, fmt.Errorf("%s failed at %s: %s", w.Metadata.Name, broken, strings.Join(errs, "; "))
	}
	first := w.Status.FinishedAt.Sub(w.Status.StartedAt.Time)

	// Fixed in Git, the executor block again: the resume.
	if err := r.breakApp(broken, false); err != nil {
		return row, err
	}
	fixed = true
	runs0, err := s.runs(s.deployTemplate())
	if err != nil {
		return row, err
	}
	nodes0 := w.appNodes(syncTmpl)
	t1 := time.Now()
	out, err = h.runDoc(work, settings, []string{s.qs["executor"]}, "REPORT_DIR="+work)
	if err != nil {
		return row, err
	}
	resumed := time.Since(t1)
	stop()
	if !strings.Contains(out, w.Metadata.Name) {
		return row, fmt.Errorf("deployctl deploy did not name the resumed run %s:\n%s", w.Metadata.Name, lastLines(out, 20))
	}
	if runs, err := s.runs(s.deployTemplate()); err != nil || len(runs) != len(runs0) {
		return row, fmt.Errorf("deployctl deploy submitted a new run instead of resuming %s (runs %v -> %v, %v)", w.Metadata.Name, runs0, runs, err)
	}
	kept, rerun, err := s.checkResumed(w.Metadata.Name, broken, apps, nodes0)
	if err != nil {
		return row, err
	}
	sort.Strings(want)
	sort.Strings(rerun)
	if strings.Join(rerun, ",") != strings.Join(want, ",") {
		return row, fmt.Errorf("the resume of %s ran %v, want %s and its dependents %v", w.Metadata.Name, rerun, broken, want)
	}
	w2, err := h.workflow(w.Metadata.Name)
	if err != nil {
		return row, err
	}
	apps2, err := h.applications()
	if err != nil {
		return row, err
	}
	v := w0.violations(s.p)
	row.violations = len(v)
	// A resume in place resets the run's startedAt (Argo's retry): the
	// order is checked from the first attempt's start, over both.
	w2.Status.StartedAt = w.Status.StartedAt
	edges, _, oerr := s.checkOrder(w2, apps2)
	if len(v) > 0 || oerr != nil {
		return row, fmt.Errorf("order violations in %s: %v %v", w.Metadata.Name, v, oerr)
	}
	failedOps, _, _ := w0.failures()
	row.retries = failedOps
	row.converged = true
	row.makespan = first + resumed
	for _, n := range w2.Status.Nodes {
		if n.Type == "Pod" {
			row.pods++
		}
	}
	row.detail = fmt.Sprintf("%s Failed at %s alone in %s (%q), its %d dependents never synced, the other %d apps Healthy; fixed in Git, the executor resumed it in place in %s: ran only %v, %d apps kept; %d edges held over both",
		w.Metadata.Name, broken, sec(first), firstLine(leaf, 160), len(want)-1, len(kept), sec(resumed), rerun, len(kept), edges)
	return row, nil
}

// ---- b'. validate on the 41 apps

func (r *rfcRun) validate() (string, error) {
	h := r.s.h
	w, err := h.runWorkflow(r.s.validateTemplate(), "Succeeded", 5*time.Minute)
	if err != nil {
		return "", fmt.Errorf("validate on the 41 apps: %w", err)
	}
	return fmt.Sprintf("validate %s Succeeded in %s on the %d apps", w.Metadata.Name, sec(w.Status.FinishedAt.Sub(w.Status.StartedAt.Time)), len(r.s.p.Apps)), nil
}

// predicted: the plan's DAG makespan and waves makespan under the durations
// the run measured (its executor report).
func (r *rfcRun) predicted(spec, report string) (string, error) {
	h := r.s.h
	bin, err := h.deployctlDir()
	if err != nil {
		return "", err
	}
	out, err := h.run(time.Minute, r.work, filepath.Join(bin, "deployctl"), "plan", spec, "--compare-waves",
		"--waves", filepath.Join(h.repo, "pkg", "importer", "testdata", "rfc-waves.yaml"), "--durations", report)
	if err != nil {
		return "", err
	}
	_ = os.WriteFile(report+".plan.txt", []byte(out), 0o644)
	dag, waves := "", ""
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "DAG (every app starts when its own dependencies are Healthy): "); ok {
			dag = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "Sync waves (every wave waits for the slowest app of the wave before it): "); ok {
			waves = strings.TrimSpace(v)
		}
	}
	if dag == "" {
		return "", fmt.Errorf("plan --compare-waves printed no DAG makespan:\n%s", lastLines(out, 10))
	}
	return fmt.Sprintf("%s (waves %s)", dag, waves), nil
}

// ---- d. teardown, reset, clean-up

func (r *rfcRun) teardown() (string, error) {
	h := r.s.h
	t0 := time.Now()
	tw, err := h.runWorkflow(r.s.teardownTemplate(), "Succeeded", wfTimeout, "confirm="+r.s.p.Name, "crd-policy=delete")
	if err != nil {
		return "", fmt.Errorf("teardown: %w", err)
	}
	apps, err := h.applications()
	if err != nil {
		return "", err
	}
	var left []string
	for _, a := range r.s.p.Apps {
		if _, ok := apps[a]; ok {
			left = append(left, "Application "+a)
		}
	}
	if err := h.waitFor("the stand-in's pods gone", 2*time.Minute, func() (bool, error) {
		out, err := h.kubectl("get", "pods", "-A", "-l", "app.kubernetes.io/part-of="+rfcPartOf, "-o", "name")
		return err == nil && strings.TrimSpace(out) == "", fmt.Errorf("%s %v", strings.Join(strings.Fields(out), " "), err)
	}); err != nil {
		left = append(left, err.Error())
	}
	crds, _ := h.kubectl(append([]string{"get", "crd", "--ignore-not-found", "-o", "name"}, r.ref.crdNames()...)...)
	if strings.TrimSpace(crds) != "" {
		left = append(left, "CRDs "+strings.Join(strings.Fields(crds), " "))
	}
	if len(left) > 0 {
		return "", fmt.Errorf("deployctl teardown %s left: %s", tw.Metadata.Name, strings.Join(left, "; "))
	}
	// SC-4: of everything the stand-in deployed, only the retained
	// volumes are left (Released, Retain: ceph-operator's provisioner made
	// them, as Ceph's would, so they are no app's to delete). The PVCs go
	// with their apps; waited for.
	var pvs []string
	if err := h.waitFor("nothing of the stand-in left but its retained PersistentVolumes", 2*time.Minute, func() (bool, error) {
		var other []string
		var err error
		pvs, other, err = r.leftovers()
		return err == nil && len(other) == 0 && len(pvs) == rfcClaims(), fmt.Errorf("left besides %d retained PVs (want %d, one per claim): %v %v", len(pvs), rfcClaims(), other, err)
	}); err != nil {
		return "", fmt.Errorf("SC-4 after %s: %w", tw.Metadata.Name, err)
	}
	return fmt.Sprintf("plugin-mode teardown %s (crd-policy=delete) Succeeded in %s (%s until the pods and claims were gone): SC-4, nothing of the stand-in left but its %d retained PVs, Retain (%s), the namespaces Argo CD created stay (empty)",
		tw.Metadata.Name, sec(tw.Status.FinishedAt.Sub(tw.Status.StartedAt.Time)), sec(time.Since(t0)), len(pvs), strings.Join(head(pvs, 2), ", ")), nil
}

// leftovers: the stand-in's objects still in the cluster (by its label,
// over every listable kind but its own CRDs' kinds): its PVs with reclaim
// policy Retain whose claim is gone (Released), and everything else.
func (r *rfcRun) leftovers() (pvs, other []string, err error) {
	h := r.s.h
	res, err := h.kubectl("api-resources", "--verbs=list", "-o", "name")
	if err != nil {
		return nil, nil, err
	}
	own := map[string]bool{}
	for _, c := range rfcCRDs {
		own[c.plural+"."+c.group] = true
	}
	var kinds []string
	for _, k := range strings.Fields(res) {
		if !own[k] && k != "events" && k != "events.events.k8s.io" {
			kinds = append(kinds, k)
		}
	}
	var list struct {
		Items []struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
			Spec     struct {
				PersistentVolumeReclaimPolicy string `json:"persistentVolumeReclaimPolicy"`
			}
			Status struct{ Phase string }
		}
	}
	if err := h.getJSON(&list, "get", strings.Join(kinds, ","), "-A", "-l", "app.kubernetes.io/part-of="+rfcPartOf); err != nil {
		return nil, nil, err
	}
	for _, it := range list.Items {
		id := it.Kind + " " + strings.TrimPrefix(it.Metadata.Namespace+"/"+it.Metadata.Name, "/")
		// Released: its claim is gone (the provisioner made one per claim).
		if it.Kind == "PersistentVolume" && it.Status.Phase == "Released" && it.Spec.PersistentVolumeReclaimPolicy == "Retain" {
			pvs = append(pvs, it.Metadata.Name+" "+it.Status.Phase)
			continue
		}
		if it.Kind == "PersistentVolume" {
			id += " " + it.Status.Phase + "/" + it.Spec.PersistentVolumeReclaimPolicy
		}
		other = append(other, id)
	}
	sort.Strings(pvs)
	sort.Strings(other)
	return pvs, other, nil
}

// reset removes every Application of the stand-in with its resources
// (Argo CD's cascade: used where deployctl's deploy or teardown ran to its
// end, a few seconds), then what Argo CD leaves (CRDs, the webhook if its
// app did not remove it, PersistentVolumes): the next run starts from an
// empty cluster, a CR before its CRD failing again. After Argo CD alone,
// clear does it without the cascade.
func (r *rfcRun) reset() error {
	h := r.s.h
	del := func(args ...string) (string, error) {
		return h.run(6*time.Minute, h.repo, filepath.Join(h.bin, "kubectl"), args...)
	}
	all := append(append([]string{rfcRoot}, r.stackNames()...), r.s.p.Apps...)
	if _, err := del(append([]string{"-n", argocdNS, "delete", "applications.argoproj.io", "--ignore-not-found", "--wait=true", "--timeout=300s"}, all...)...); err != nil {
		return err
	}
	if _, err := h.kubectl("delete", "validatingwebhookconfiguration", rfcWebhook, "--ignore-not-found"); err != nil {
		return err
	}
	if _, err := h.kubectl(append([]string{"delete", "crd", "--ignore-not-found", "--wait=true", "--timeout=120s"}, r.ref.crdNames()...)...); err != nil {
		return err
	}
	_, _ = h.kubectl("delete", "pvc", "-A", "-l", "app.kubernetes.io/part-of="+rfcPartOf, "--wait=true", "--timeout=60s")
	_, _ = h.kubectl("delete", "pv", "-l", "app.kubernetes.io/part-of="+rfcPartOf, "--wait=true", "--timeout=60s")
	return h.waitFor("the stand-in's pods and volumes gone", 3*time.Minute, func() (bool, error) {
		out, err := h.kubectl("get", "pods,pvc", "-A", "-l", "app.kubernetes.io/part-of="+rfcPartOf, "-o", "name")
		out2, err2 := h.kubectl("get", "pv", "-l", "app.kubernetes.io/part-of="+rfcPartOf, "-o", "name")
		left := strings.Fields(out + " " + out2)
		return err == nil && err2 == nil && len(left) == 0, fmt.Errorf("left: %s %v %v", strings.Join(left, " "), err, err2)
	})
}

// presentNamespaces: the stand-in's namespaces that exist now (kube-system
// always does).
func (r *rfcRun) presentNamespaces() (map[string]bool, error) {
	out, err := r.s.h.kubectl("get", "namespaces", "-o", "name")
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range strings.Fields(out) {
		have[strings.TrimPrefix(n, "namespace/")] = true
	}
	present := map[string]bool{"kube-system": true}
	for _, n := range r.ref.namespaces() {
		if have[n] {
			present[n] = true
		}
	}
	return present, nil
}

// inventory: every object of every listable kind but events, as "kind
// namespace/name", sorted.
func (r *rfcRun) inventory() ([]string, error) {
	h := r.s.h
	res, err := h.kubectl("api-resources", "--verbs=list", "-o", "name")
	if err != nil {
		return nil, err
	}
	var kinds []string
	for _, k := range strings.Fields(res) {
		if k != "events" && k != "events.events.k8s.io" {
			kinds = append(kinds, k)
		}
	}
	out, err := h.kubectl("get", strings.Join(kinds, ","), "-A", "-o", `jsonpath={range .items[*]}{.apiVersion}/{.kind} {.metadata.namespace}/{.metadata.name}{"\n"}{end}`)
	if err != nil {
		return nil, err
	}
	inv := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(inv)
	return inv, nil
}

// setMinus: the elements of a not in b.
func setMinus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

// clear removes the stand-in without Argo CD's cascade, which through an
// app-of-apps stopped half-way took about 4 minutes: every Application of
// it (root, stacks, apps) deleted with its finalizer removed, so Argo CD
// deletes nothing; the webhook; the stand-in's namespaces that keep does
// not name, whole; in those it names, the objects labelled as the
// stand-in's; then every cluster-scoped object so labelled (CRDs and with
// them their resources, RBAC, the StorageClass, the volumes). It returns
// once nothing labelled as the stand-in's is left over every listable kind,
// no Application of it and none of those namespaces, or fails.
func (r *rfcRun) clear(keep map[string]bool) error {
	h := r.s.h
	del := func(args ...string) (string, error) {
		return h.run(4*time.Minute, h.repo, filepath.Join(h.bin, "kubectl"), args...)
	}
	sel := "app.kubernetes.io/part-of=" + rfcPartOf
	all := append(append([]string{rfcRoot}, r.stackNames()...), r.s.p.Apps...)
	own := map[string]bool{}
	for _, n := range all {
		own[n] = true
	}
	// Deleted first (a deleted app-of-apps creates no more children), then
	// unblocked; again for any a stack created meanwhile.
	if _, err := del(append([]string{"-n", argocdNS, "delete", "applications.argoproj.io", "--ignore-not-found", "--wait=false"}, all...)...); err != nil {
		return err
	}
	if err := h.waitFor("the stand-in's Applications deleted without cascade", 2*time.Minute, func() (bool, error) {
		apps, err := h.applications()
		if err != nil {
			return false, err
		}
		var left []string
		for n := range apps {
			if own[n] {
				left = append(left, n)
			}
		}
		sort.Strings(left)
		if len(left) == 0 {
			return true, nil
		}
		if _, err := del(append([]string{"-n", argocdNS, "delete", "applications.argoproj.io", "--ignore-not-found", "--wait=false"}, left...)...); err != nil {
			return false, err
		}
		var wg sync.WaitGroup
		errs := make([]error, len(left))
		sem := make(chan struct{}, 8)
		for i, n := range left {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				_, errs[i] = h.kubectl("-n", argocdNS, "patch", "applications.argoproj.io", n, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
			}()
		}
		wg.Wait()
		return false, fmt.Errorf("%d left: %s (%v)", len(left), strings.Join(head(left, 5), " "), errors.Join(errs...))
	}); err != nil {
		return err
	}
	if _, err := h.kubectl("delete", "validatingwebhookconfiguration", rfcWebhook, "--ignore-not-found"); err != nil {
		return err
	}
	var gone []string
	for _, n := range r.ref.namespaces() {
		if !keep[n] {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		if _, err := h.kubectl(append([]string{"delete", "namespace", "--ignore-not-found", "--wait=false"}, gone...)...); err != nil {
			return err
		}
	}
	nsKinds, err := h.kubectl("api-resources", "--namespaced=true", "--verbs=list,delete", "-o", "name")
	if err != nil {
		return err
	}
	clKinds, err := h.kubectl("api-resources", "--namespaced=false", "--verbs=list,delete", "-o", "name")
	if err != nil {
		return err
	}
	var nk []string
	for _, k := range strings.Fields(nsKinds) {
		if k != "events" && k != "events.events.k8s.io" {
			nk = append(nk, k)
		}
	}
	for n := range keep {
		if _, err := del("delete", strings.Join(nk, ","), "-n", n, "-l", sel, "--ignore-not-found", "--wait=false"); err != nil {
			return err
		}
	}
	if err := h.waitFor("the stand-in's namespaces, pods and claims gone", 3*time.Minute, func() (bool, error) {
		out, err := h.kubectl("get", "pods,pvc", "-A", "-l", sel, "-o", "name")
		if err != nil {
			return false, err
		}
		left := strings.Fields(out)
		if len(gone) > 0 {
			ns, err := h.kubectl(append([]string{"get", "namespace", "--ignore-not-found", "-o", "name"}, gone...)...)
			if err != nil {
				return false, err
			}
			left = append(left, strings.Fields(ns)...)
		}
		return len(left) == 0, fmt.Errorf("left: %s", strings.Join(head(left, 8), " "))
	}); err != nil {
		return err
	}
	return h.waitFor("nothing of the stand-in left over every listable kind", 3*time.Minute, func() (bool, error) {
		if _, err := del("delete", strings.Join(strings.Fields(clKinds), ","), "-l", sel, "--ignore-not-found", "--wait=true", "--timeout=120s"); err != nil {
			return false, err
		}
		pvs, other, err := r.leftovers()
		if err != nil {
			return false, err
		}
		left := append(pvs, other...)
		if len(left) == 0 {
			return true, nil
		}
		for n := range keep { // what an in-flight sync made after the first pass
			if _, err := del("delete", strings.Join(nk, ","), "-n", n, "-l", sel, "--ignore-not-found", "--wait=false"); err != nil {
				return false, err
			}
		}
		return false, fmt.Errorf("left: %s", strings.Join(head(left, 8), " "))
	})
}

// cleanup leaves the cluster as the step found it: no stand-in object, no
// namespace of it, the health keys removed from argocd-cm.
//
// The health keys go first: a change of argocd-cm makes Argo CD's
// controller invalidate its cluster cache, and Argo CD v3.6.1 panics when
// that happens while it reconciles the watches after an APIService event
// (the CRDs' deletion below): test/e2e/README.md, "Restarts". Not hidden:
// supervise.sh restarts a controller that died and the step reports it.
func (r *rfcRun) cleanup() error {
	h := r.s.h
	data := map[string]any{}
	for k := range r.ref.healthKeys() {
		data[k] = nil
	}
	data[appHealthKey] = nil
	patch, _ := json.Marshal(map[string]any{"data": data})
	if _, err := h.kubectl("-n", argocdNS, "patch", "configmap", "argocd-cm", "--type=merge", "-p", string(patch)); err != nil {
		return err
	}
	// The namespaces too, waited for: the Quickstart's example (step 13)
	// deploys into two of them (cert-manager, ingress-nginx), and nothing
	// can be created in a namespace still terminating.
	return r.clear(map[string]bool{"kube-system": true})
}

func rfcTable(rows []rfcRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nthe RFC platform (41 apps, stand-in)\n%-28s %10s %8s %10s %10s %22s %6s\n", "system", "violations", "retries", "converged", "makespan", "predicted (DAG)", "pods")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-28s %10d %8d %10v %10s %22s %6d\n", r.system, r.violations, r.retries, r.converged, sec(r.makespan), r.predicted, r.pods)
	}
	return b.String()
}
