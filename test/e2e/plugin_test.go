//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// ---- 12: plugin mode (issue 15), on the platform step 8 tore down
//
// The same platform with spec.workflow.stepMode: plugin, applied and run
// through the Quickstart's executor block in a work directory of its own:
// a measured deploy side by side with step 3's pod-mode one, a failure whose
// reason is the node's message, a resume during which the agent pod is
// killed while a node waits, and a teardown. Then the pod-mode templates are
// applied again for the steps after this one.

const agentLabel = "workflows.argoproj.io/component=agent"

func (s *scenario) pluginMode() (string, error) {
	h := s.h
	if err := s.reset(); err != nil {
		return "", fmt.Errorf("reset: %w", err)
	}
	pm, err := s.pluginWork()
	if err != nil {
		return "", err
	}
	defer func() {
		// The steps after this one run the pod-mode templates, on the
		// absent platform (as after step 8) even when this step failed.
		if err := s.reset(); err != nil {
			fmt.Printf("step 12: reset: %v\n", err)
		}
		if _, err := s.readmeRun("apply"); err != nil {
			fmt.Printf("step 12: re-applying the pod-mode templates: %v\n", err)
		}
	}()

	// Step 8 deleted the Widget CRD (crd-policy=delete); one still
	// terminating makes widget-crd's sync wait (20 s seen), which the
	// measure below would count as this mode's overhead.
	if err := h.waitFor("the Widget CRD gone", 2*time.Minute, func() (bool, error) {
		out, err := h.kubectl("get", "crd", "widgets.e2e.deployctl.dev", "--ignore-not-found", "-o", "name")
		return err == nil && strings.TrimSpace(out) == "", err
	}); err != nil {
		return "", err
	}

	// a. deploy, measured, every pod of the run counted while it runs.
	pods := h.countPods()
	before, err := s.runs(s.deployTemplate())
	if err != nil {
		pods.stop()
		return "", err
	}
	out, err := pm.executor("deploy")
	pods.stop()
	if err != nil {
		return "", err
	}
	w, err := s.newRun(s.deployTemplate(), before)
	if err != nil {
		return "", err
	}
	if w.Status.Phase != "Succeeded" {
		return "", fmt.Errorf("plugin-mode deploy: %s\n%s", w.describe(), lastLines(out, 20))
	}
	apps, err := h.applications()
	if err != nil {
		return "", err
	}
	if _, _, err := s.checkOrder(w, apps); err != nil {
		return "", fmt.Errorf("plugin-mode order: %w", err)
	}
	c, err := s.edgeCost(w, apps)
	if err != nil {
		return "", err
	}
	c.agentPods = pods.agents(w.Metadata.Name)
	c.stepPods += pods.steps(w.Metadata.Name)
	if c.stepPods != 0 || c.agentPods != 1 {
		return "", fmt.Errorf("plugin-mode deploy %s made %d step pods and %d agent pods, want 0 and 1", w.Metadata.Name, c.stepPods, c.agentPods)
	}
	side := sideBySide(s.podCost, c)
	fmt.Print(side)
	_ = os.WriteFile(filepath.Join(h.state, "logs", "stepmode-side-by-side.txt"), []byte(side), 0o644)

	// b. failure: the node's message carries Argo CD's reason.
	if err := s.reset(); err != nil {
		return "", fmt.Errorf("reset: %w", err)
	}
	if _, err := h.script("gitrepo.sh", "break", brokenApp); err != nil {
		return "", err
	}
	failName, err := h.submit(s.deployTemplate())
	if err != nil {
		return "", err
	}
	fw, err := h.waitWorkflow(failName, wfTimeout)
	if err != nil {
		return "", err
	}
	failed := fw.failedApps(syncTmpl)
	if fw.Status.Phase != "Failed" || len(failed) != 1 || failed[0] != brokenApp {
		return "", fmt.Errorf("plugin-mode failure: want Failed at %s, got %v: %s", brokenApp, failed, fw.describe())
	}
	msg := failedLeafMessage(fw, brokenApp)
	if !strings.Contains(msg, "Degraded") && !strings.Contains(msg, "Progressing") {
		return "", fmt.Errorf("plugin-mode failed node %s says %q: no Argo CD health reason", brokenApp, msg)
	}

	// c. resume; the agent pod is killed while a node waits for health.
	if _, err := h.script("gitrepo.sh", "fix", brokenApp); err != nil {
		return "", err
	}
	failedApps, err := h.applications()
	if err != nil {
		return "", err
	}
	hist0 := historyLen(failedApps)
	resumed := time.Now()
	done := make(chan error, 1)
	var rout string
	go func() {
		var err error
		rout, err = pm.executor("deploy")
		done <- err
	}()
	killed, kerr := s.killAgentWhileWaiting(failName, resumed)
	if err := <-done; err != nil {
		return "", err
	}
	if kerr != nil {
		return "", kerr
	}
	rw, err := h.workflow(failName)
	if err != nil {
		return "", err
	}
	if rw.Status.Phase != "Succeeded" {
		return "", fmt.Errorf("plugin-mode resume of %s: %s\n%s", failName, rw.describe(), lastLines(rout, 20))
	}
	apps, err = h.applications()
	if err != nil {
		return "", err
	}
	var errs []string
	synced := map[string]int{}
	for app, n := range historyLen(apps) {
		synced[app] = n - hist0[app]
	}
	rerun := append([]string{brokenApp}, keys(s.p.descendants(brokenApp))...)
	for _, a := range rerun {
		if synced[a] != 1 {
			errs = append(errs, fmt.Sprintf("%s synced %d times in the resumed run, want 1", a, synced[a]))
		}
	}
	for a, n := range rw.appNodes(syncTmpl) {
		ht := apps[a].Status.Health.LastTransitionTime
		if n.Phase != "Succeeded" || n.FinishedAt == nil || ht == nil || n.FinishedAt.Before(ht.Time.Truncate(time.Second)) {
			errs = append(errs, fmt.Sprintf("%s: node %s finished %v before the app was Healthy (%v)", a, n.Phase, n.FinishedAt, ht))
		}
	}
	if len(errs) > 0 {
		return "", errors.New(strings.Join(errs, "; "))
	}

	// d. teardown through the plugin.
	tw, err := h.runWorkflow(s.teardownTemplate(), "Succeeded", wfTimeout, "confirm="+s.p.Name, "crd-policy=delete")
	if err != nil {
		return "", fmt.Errorf("plugin-mode teardown: %w", err)
	}
	left, err := h.applications()
	if err != nil {
		return "", err
	}
	for _, a := range s.p.Apps {
		if _, ok := left[a]; ok {
			return "", fmt.Errorf("plugin-mode teardown %s left Application %s", tw.Metadata.Name, a)
		}
	}
	return fmt.Sprintf("plugin deploy %s: %s | failure %s at %s, node message %q | resume: %s; %s Succeeded, %v synced once each, no node finished before its app was Healthy | teardown %s Succeeded in %s",
		w.Metadata.Name, c, failName, brokenApp, msg, killed, failName, rerun, tw.Metadata.Name,
		sec(tw.Status.FinishedAt.Sub(tw.Status.StartedAt.Time))), nil
}

// pluginRun is the plugin-mode copy of the Quickstart: its own spec and
// work directory, the same cluster settings.
type pluginRun struct {
	s        *scenario
	work     string
	settings string
}

func (s *scenario) pluginWork() (*pluginRun, error) {
	h := s.h
	src := filepath.Join(h.e2eDir, "testdata", "platform.yaml")
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	spec := strings.Replace(string(b), "\n  workflow:\n", "\n  workflow:\n    stepMode: plugin\n", 1)
	if spec == string(b) {
		return nil, fmt.Errorf("%s: no spec.workflow to set stepMode in", src)
	}
	work := filepath.Join(h.state, "quickstart-plugin")
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return nil, err
	}
	file := filepath.Join(work, "platform-plugin.yaml")
	if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
		return nil, err
	}
	settings := strings.Replace(s.settings, "SPEC="+shellQuote(src), "SPEC="+shellQuote(file), 1)
	if settings == s.settings {
		return nil, errors.New("the Quickstart settings have no SPEC line to point at the plugin-mode spec")
	}
	return &pluginRun{s: s, work: work, settings: settings}, nil
}

// executor runs the Quickstart's generate block and its executor block
// with ACTION (deploy) in the plugin work directory.
func (p *pluginRun) executor(action string) (string, error) {
	block := strings.Replace(p.s.qs["executor"], "deployctl deploy", "deployctl "+action, 1)
	return p.s.h.runDoc(p.work, p.settings, []string{p.s.qs["generate"], block}, "REPORT_DIR="+p.work)
}

// killAgentWhileWaiting deletes the run's agent pod once a node of the
// resumed run waits for its app's health (sync started, not yet Healthy).
func (s *scenario) killAgentWhileWaiting(run string, since time.Time) (string, error) {
	h := s.h
	var app string
	err := h.waitFor("a resumed node waiting for health", 4*time.Minute, func() (bool, error) {
		apps, err := h.applications()
		if err != nil {
			return false, err
		}
		for _, a := range append([]string{brokenApp}, keys(s.p.descendants(brokenApp))...) {
			ap := apps[a]
			if syncStart(ap, since) != nil && ap.Status.Health.Status != "Healthy" {
				app = a
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", err
	}
	out, err := h.kubectl("-n", argoNS, "get", "pods", "-l", agentLabel+",workflows.argoproj.io/workflow="+run, "-o", "name")
	if err != nil || strings.TrimSpace(out) == "" {
		return "", fmt.Errorf("no agent pod of %s while %s waited (%v)", run, app, err)
	}
	pod := strings.Fields(out)[0]
	if _, err := h.kubectl("-n", argoNS, "delete", pod, "--wait=false"); err != nil {
		return "", err
	}
	return fmt.Sprintf("agent %s deleted while %s waited for health", strings.TrimPrefix(pod, "pod/"), app), nil
}

// podCounter records every pod of every run while it runs (podGC and the
// agent's deletion at the end leave nothing to count afterwards).
type podCounter struct {
	mu   sync.Mutex
	seen map[string]map[string]bool // run -> pod name -> is agent
	quit chan struct{}
	done chan struct{}
}

func (h *harness) countPods() *podCounter {
	c := &podCounter{seen: map[string]map[string]bool{}, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			var l struct {
				Items []struct {
					Metadata struct {
						Name   string
						Labels map[string]string
					}
				}
			}
			if err := h.getJSON(&l, "-n", argoNS, "get", "pods", "-l", "workflows.argoproj.io/workflow"); err == nil {
				c.mu.Lock()
				for _, p := range l.Items {
					run := p.Metadata.Labels["workflows.argoproj.io/workflow"]
					if c.seen[run] == nil {
						c.seen[run] = map[string]bool{}
					}
					c.seen[run][p.Metadata.Name] = p.Metadata.Labels["workflows.argoproj.io/component"] == "agent"
				}
				c.mu.Unlock()
			}
			select {
			case <-c.quit:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return c
}

func (c *podCounter) stop() { close(c.quit); <-c.done }

func (c *podCounter) count(run string, agent bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, a := range c.seen[run] {
		if a == agent {
			n++
		}
	}
	return n
}

func (c *podCounter) agents(run string) int { return c.count(run, true) }
func (c *podCounter) steps(run string) int  { return c.count(run, false) }

// sideBySide is the makespan table of both modes.
func sideBySide(pod, plugin cost) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-34s %12s %12s\n", "deploy of the e2e platform", "pod mode", "plugin mode")
	row := func(name string, a, p time.Duration) {
		fmt.Fprintf(&b, "%-34s %12s %12s\n", name, sec(a), sec(p))
	}
	row("makespan", pod.makespan, plugin.makespan)
	row("overhead per critical edge", pod.overhead, plugin.overhead)
	row("  dispatch", pod.dispatch, plugin.dispatch)
	row("  step start-up", pod.stepUp, plugin.stepUp)
	row("  health observation", pod.observe, plugin.observe)
	row("workflow tail", pod.tail, plugin.tail)
	fmt.Fprintf(&b, "%-34s %12d %12d\n", "pods created (step + agent)", pod.stepPods+pod.agentPods, plugin.stepPods+plugin.agentPods)
	return b.String()
}

// failedLeafMessage is the message of the failed attempt of app's node (the
// leaf under its Retry node): where Argo shows the reason.
func failedLeafMessage(w *workflow, app string) string {
	var ids []string
	for id := range w.Status.Nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	msg := ""
	for _, id := range ids {
		n := w.Status.Nodes[id]
		if n.param("app") == app && (n.Type == "Plugin" || n.Type == "Pod") && (n.Phase == "Failed" || n.Phase == "Error") {
			msg = n.Message
		}
	}
	return msg
}

func historyLen(apps map[string]application) map[string]int {
	out := map[string]int{}
	for name, a := range apps {
		out[name] = len(a.Status.History)
	}
	return out
}
