//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ---- 14: the RFC's 41-app platform, where order matters, side by side
// with sync waves (issue 24). The stand-in is rfcfixture_test.go's.
//
//  a. the edges are real: plan --explain-edges --manifests holds the spec
//     (exit 0) and catches a dropped edge (exit 3, naming it);
//  b. Argo CD alone with the RFC's app-of-apps and waves (-30…+50) and the
//     Application health check owners install: what it did, recorded;
//  c. deployctl deploy (the Quickstart's executor block) in plugin mode,
//     then in pod mode: 0 order violations or the step fails, makespan,
//     and the plan's prediction from the run's own report;
//  d. between the two, deployctl's teardown of the plugin-mode deploy:
//     no Application, pod or CRD left.
//
// One table: system · violations · retries · makespan · predicted · pods.

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

func (s *scenario) rfcPlatform() (_ string, err error) {
	h := s.h
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
		if cerr := r.cleanup(); cerr != nil && err == nil {
			err = fmt.Errorf("clean-up: %w", cerr)
		}
	}()
	if err := r.reset(false); err != nil {
		return "", fmt.Errorf("reset: %w", err)
	}

	// b. Argo CD alone.
	var rows []rfcRow
	alone, err := r.argoAlone()
	if err != nil {
		return "", fmt.Errorf("Argo CD alone: %w", err)
	}
	rows = append(rows, alone)
	if err := r.reset(true); err != nil {
		return "", fmt.Errorf("reset after Argo CD alone: %w", err)
	}

	// c. deployctl, plugin mode, then (d) its teardown of the 41 apps,
	// then pod mode (whose templates stay applied for the steps after
	// this one; the clean-up removes its deploy).
	var td string
	for _, mode := range []string{"plugin", "pod"} {
		row, err := r.deployctl(mode, specs[mode])
		rows = append(rows, row)
		if err != nil {
			fmt.Print(rfcTable(rows))
			return "", fmt.Errorf("deployctl %s mode: %w", mode, err)
		}
		if mode == "plugin" {
			if td, err = r.teardown(); err != nil {
				return "", err
			}
			if err := r.reset(false); err != nil {
				return "", fmt.Errorf("reset after the teardown: %w", err)
			}
		}
	}
	table := rfcTable(rows)
	fmt.Print(table)
	_ = os.WriteFile(filepath.Join(h.state, "logs", "rfc-side-by-side.txt"), []byte(table), 0o644)
	var parts []string
	for _, row := range rows {
		parts = append(parts, fmt.Sprintf("%s: %d violations, %d retries, makespan %s, predicted %s, %d pods (%s)",
			row.system, row.violations, row.retries, sec(row.makespan), row.predicted, row.pods, row.detail))
	}
	return fmt.Sprintf("%s | %s | %s", edges, strings.Join(parts, " | "), td), nil
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
	return fmt.Sprintf("plan --explain-edges --manifests: the spec holds (exit 0), without %s exit 3 naming it", rfcDroppedEdge), nil
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
	werr := h.waitFor("Argo CD alone: every Application of the RFC app-of-apps Healthy and Synced", 3*time.Minute, func() (bool, error) {
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
	row.detail = fmt.Sprintf("converged without a hand: %v; %d failed sync operations, %d retries by Argo CD", row.converged, failed, retries)
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
	work := filepath.Join(r.work, mode)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return row, err
	}
	settings, err := withSettings(s.qs["settings"], map[string]string{
		"SPEC": spec, "PLATFORM": s.p.Name, "ARGOCD_URL": argocdURL, "ARGOCD_CA": filepath.Join(h.state, "pki", "ca.crt"),
		"ARGOCD_NS": argocdNS, "WF_NS": argoNS, "TOKEN_SECRET": "deployctl-argocd-token", "CA_SECRET": "argocd-ca",
	})
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
	c, cerr := s.edgeCost(w, apps)
	row.detail = fmt.Sprintf("%s Succeeded; %d edges held (each sync after its dependencies' fresh Healthy and node end), %d independent pairs overlapped; %d failed syncs, %d step retries",
		w.Metadata.Name, edges, len(overlaps), failed, attempts)
	if cerr == nil {
		row.detail += fmt.Sprintf("; critical path of readiness delays %s = %s, overhead %s per critical edge", strings.Join(c.path, "->"), sec(c.delay), sec(c.overhead))
	}
	if len(ex) > 0 {
		row.detail += "; e.g. " + strings.Join(ex, "; ")
	}
	return row, nil
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
	// The PVCs and PVs are the apps' own resources (not a StatefulSet's
	// claims, which pv-policy keeps): Argo CD's cascade deletes them.
	vols, _ := h.kubectl("get", "pvc,pv", "-A", "-l", "app.kubernetes.io/part-of="+rfcPartOf, "-o", "name")
	if len(left) > 0 {
		return "", fmt.Errorf("deployctl teardown %s left: %s", tw.Metadata.Name, strings.Join(left, "; "))
	}
	return fmt.Sprintf("plugin-mode teardown %s (crd-policy=delete) Succeeded in %s (%s until the pods were gone): no Application, pod or CRD left; %d PVCs/PVs still terminating (the apps' own, deleted by the cascade)",
		tw.Metadata.Name, sec(tw.Status.FinishedAt.Sub(tw.Status.StartedAt.Time)), sec(time.Since(t0)), len(strings.Fields(vols))), nil
}

// reset removes every Application of the stand-in (the app-of-apps' too)
// with its resources, then what Argo CD leaves (CRDs, the webhook if its
// app did not remove it, PersistentVolumes): the next run starts from an
// empty cluster, a CR before its CRD failing again.
func (r *rfcRun) reset(rootFirst bool) error {
	h := r.s.h
	// The cascade through an app-of-apps stopped half-way can take longer
	// than h.kubectl's 2 minutes (seen: killed at 2 min).
	del := func(args ...string) (string, error) {
		return h.run(6*time.Minute, h.repo, filepath.Join(h.bin, "kubectl"), args...)
	}
	if rootFirst {
		if _, err := del("-n", argocdNS, "delete", "applications.argoproj.io", rfcRoot, "--ignore-not-found", "--wait=true", "--timeout=300s"); err != nil {
			return err
		}
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

// cleanup leaves the cluster as the step found it: no stand-in object, no
// namespace of it, the health keys removed from argocd-cm.
func (r *rfcRun) cleanup() error {
	h := r.s.h
	if err := r.reset(true); err != nil {
		return err
	}
	data := map[string]any{}
	for k := range r.ref.healthKeys() {
		data[k] = nil
	}
	data[appHealthKey] = nil
	patch, _ := json.Marshal(map[string]any{"data": data})
	if _, err := h.kubectl("-n", argocdNS, "patch", "configmap", "argocd-cm", "--type=merge", "-p", string(patch)); err != nil {
		return err
	}
	// Waited for: the Quickstart's example (step 13) deploys into two of
	// them (cert-manager, ingress-nginx), and nothing can be created in a
	// namespace still terminating.
	_, err := h.kubectl(append([]string{"delete", "namespace", "--ignore-not-found", "--wait=true", "--timeout=180s"}, r.ref.namespaces()...)...)
	return err
}

func rfcTable(rows []rfcRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nthe RFC platform (41 apps, stand-in)\n%-28s %10s %8s %10s %10s %22s %6s\n", "system", "violations", "retries", "converged", "makespan", "predicted (DAG)", "pods")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-28s %10d %8d %10v %10s %22s %6d\n", r.system, r.violations, r.retries, r.converged, sec(r.makespan), r.predicted, r.pods)
	}
	return b.String()
}
