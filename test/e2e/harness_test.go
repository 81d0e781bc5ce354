//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/render"
)

// harness runs the cluster's own clients (kubectl, argo) and reads what
// Argo CD and Argo Workflows recorded.
type harness struct {
	t        *testing.T
	repo     string // repository root
	e2eDir   string // test/e2e
	state    string // E2E_STATE_DIR
	bin      string // the tool binaries
	kube     string // admin kubeconfig
	platform *platform
	genDir   string

	executorBuilt bool
}

const (
	argoNS   = "argo"
	argocdNS = "argocd"
	appNS    = "platform"
)

func newHarness(t *testing.T) *harness {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, e2eDir: wd, repo: filepath.Clean(filepath.Join(wd, "..", ".."))}
	h.state = os.Getenv("E2E_STATE_DIR")
	if h.state == "" {
		h.state = "/var/tmp/deployctl-e2e"
	}
	h.kube = filepath.Join(h.state, "pki", "admin.kubeconfig")
	out, err := exec.Command(filepath.Join(wd, "build-tools.sh")).Output()
	if err != nil {
		t.Fatalf("build-tools.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	h.bin = lines[len(lines)-1]
	if _, err := os.Stat(h.kube); err != nil {
		t.Skipf("no e2e cluster (%v): run make e2e-up first", err)
	}
	p, err := loadPlatform(filepath.Join(wd, "testdata", "platform.yaml"), filepath.Join(wd, "testdata", "gitrepo"))
	if err != nil {
		t.Fatal(err)
	}
	h.platform = p
	return h
}

// run runs a command with a deadline; it returns stdout, and an error carrying stderr.
func (h *harness) run(timeout time.Duration, dir string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+h.kube, "PATH="+h.bin+":"+os.Getenv("PATH"), "E2E_STATE_DIR="+h.state)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(lastLines(stderr.String()+stdout.String(), 15)))
	}
	return stdout.String(), nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

func (h *harness) kubectl(args ...string) (string, error) {
	return h.run(2*time.Minute, h.repo, filepath.Join(h.bin, "kubectl"), args...)
}

func (h *harness) argo(args ...string) (string, error) {
	return h.run(2*time.Minute, h.repo, filepath.Join(h.bin, "argo"), append([]string{"-n", argoNS}, args...)...)
}

func (h *harness) script(name string, args ...string) (string, error) {
	return h.run(5*time.Minute, h.repo, filepath.Join(h.e2eDir, name), args...)
}

func (h *harness) getJSON(v any, args ...string) error {
	out, err := h.kubectl(append(args, "-o", "json")...)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(out), v)
}

// ---- the test platform

type platform struct {
	Name       string
	Apps       []string            // in spec order
	Deps       map[string][]string // app -> apps it depends on (stack edges expanded)
	ReadyAfter map[string]time.Duration
}

// platformDoc is what the e2e reads of a platform spec (the test
// platform's, the RFC reference's): names, stacks, edges, where apps go.
type platformDoc struct {
	Metadata struct{ Name string }
	Spec     struct {
		Stacks []struct {
			Name      string
			DependsOn []string `json:"dependsOn"`
			Apps      []struct {
				Name        string
				DependsOn   []string `json:"dependsOn"`
				Source      struct{ Path string }
				Destination struct{ Namespace string }
			}
		}
	}
}

func loadPlatform(file, gitrepo string) (*platform, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc platformDoc
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	p := &platform{Name: doc.Metadata.Name, Deps: map[string][]string{}, ReadyAfter: map[string]time.Duration{}}
	stackApps := map[string][]string{}
	for _, s := range doc.Spec.Stacks {
		for _, a := range s.Apps {
			stackApps[s.Name] = append(stackApps[s.Name], a.Name)
		}
	}
	re := regexp.MustCompile(`name: READY_AFTER, value: "?([0-9a-z.]+)"?`)
	for _, s := range doc.Spec.Stacks {
		for _, a := range s.Apps {
			p.Apps = append(p.Apps, a.Name)
			deps := append([]string{}, a.DependsOn...)
			for _, ds := range s.DependsOn {
				deps = append(deps, stackApps[ds]...)
			}
			p.Deps[a.Name] = dedupe(deps)
			files, _ := filepath.Glob(filepath.Join(gitrepo, a.Source.Path, "*.yaml"))
			for _, f := range files {
				m, _ := os.ReadFile(f)
				if g := re.FindSubmatch(m); g != nil {
					d, err := time.ParseDuration(string(g[1]))
					if err != nil {
						return nil, fmt.Errorf("%s: %v", f, err)
					}
					p.ReadyAfter[a.Name] = d
				}
			}
		}
	}
	return p, nil
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// descendants: every app that depends on app, directly or not.
func (p *platform) descendants(app string) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(a string) {
		for _, b := range p.Apps {
			for _, d := range p.Deps[b] {
				if d == a && !out[b] {
					out[b] = true
					walk(b)
				}
			}
		}
	}
	walk(app)
	return out
}

func (p *platform) ordered(a, b string) bool { return p.descendants(a)[b] || p.descendants(b)[a] }

// criticalPath is the longest chain by readiness delay.
func (p *platform) criticalPath() ([]string, time.Duration) {
	best := map[string]time.Duration{}
	prev := map[string]string{}
	var visit func(string) time.Duration
	visit = func(a string) time.Duration {
		if d, ok := best[a]; ok {
			return d
		}
		var m time.Duration
		for _, d := range p.Deps[a] {
			if v := visit(d); prev[a] == "" || v > m {
				m, prev[a] = v, d
			}
		}
		best[a] = m + p.ReadyAfter[a]
		return best[a]
	}
	var end string
	var total time.Duration
	for _, a := range p.Apps {
		if v := visit(a); v > total {
			end, total = a, v
		}
	}
	var path []string
	for a := end; a != ""; a = prev[a] {
		path = append([]string{a}, path...)
	}
	return path, total
}

// ---- Argo CD's records

type kTime struct{ time.Time }

func (t *kTime) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	v, err := time.Parse(time.RFC3339, s)
	t.Time = v
	return err
}

type application struct {
	Metadata struct {
		Name              string
		UID               string
		CreationTimestamp kTime  `json:"creationTimestamp"`
		DeletionTimestamp *kTime `json:"deletionTimestamp"`
	}
	Status struct {
		Sync   struct{ Status, Revision string }
		Health struct {
			Status             string
			Message            string
			LastTransitionTime *kTime `json:"lastTransitionTime"`
		}
		OperationState *struct {
			Phase     string
			Message   string
			Operation struct {
				Info []struct{ Name, Value string }
			}
			StartedAt  *kTime `json:"startedAt"`
			FinishedAt *kTime `json:"finishedAt"`
		} `json:"operationState"`
		History []struct {
			ID              int64
			Revision        string
			DeployStartedAt *kTime `json:"deployStartedAt"`
			DeployedAt      *kTime `json:"deployedAt"`
		}
	}
}

func (h *harness) applications() (map[string]application, error) {
	var l struct{ Items []application }
	if err := h.getJSON(&l, "-n", argocdNS, "get", "applications.argoproj.io"); err != nil {
		return nil, err
	}
	m := map[string]application{}
	for _, a := range l.Items {
		m[a.Metadata.Name] = a
	}
	return m, nil
}

// ---- Argo Workflows' records

type wfNode struct {
	ID, Name, DisplayName, Type, Phase, Message, TemplateName string
	BoundaryID                                                string `json:"boundaryID"`
	StartedAt                                                 *kTime
	FinishedAt                                                *kTime
	TemplateRef                                               *struct{ Name, Template string }
	Inputs                                                    struct {
		Parameters []struct{ Name, Value string }
	}
	Outputs *struct {
		Parameters []struct{ Name, Value string }
	}
	Children []string
}

func (n wfNode) param(name string) string {
	for _, p := range n.Inputs.Parameters {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

func (n wfNode) template() string {
	if n.TemplateRef != nil {
		return n.TemplateRef.Template
	}
	return n.TemplateName
}

type workflow struct {
	Metadata struct{ Name string }
	Status   struct {
		Phase, Message string
		StartedAt      *kTime
		FinishedAt     *kTime
		Nodes          map[string]wfNode
	}
}

func (h *harness) workflow(name string) (*workflow, error) {
	var w workflow
	if err := h.getJSON(&w, "-n", argoNS, "get", "workflows.argoproj.io", name); err != nil {
		return nil, err
	}
	return &w, nil
}

// appNodes: per app, the outermost node of the given template (the Retry node
// when the template has a retryStrategy, else the Pod or Plugin node).
func (w *workflow) appNodes(tmpl string) map[string]wfNode {
	out := map[string]wfNode{}
	for _, n := range w.Status.Nodes {
		app := n.param("app")
		if app == "" || n.template() != tmpl || (n.Type != "Retry" && n.Type != "Pod" && n.Type != "Plugin") {
			continue
		}
		if cur, ok := out[app]; ok && cur.Type == "Retry" {
			continue
		}
		out[app] = n
	}
	return out
}

// submit submits a WorkflowTemplate and returns the workflow's name.
func (h *harness) submit(template string, params ...string) (string, error) {
	args := []string{"submit", "--from", "workflowtemplate/" + template, "-o", "name"}
	for _, p := range params {
		args = append(args, "-p", p)
	}
	out, err := h.argo(args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(lastLines(out, 1)), nil
}

// runWorkflow submits a WorkflowTemplate and waits for the workflow to
// finish; want, if not empty, is the phase it must end in.
func (h *harness) runWorkflow(template, want string, timeout time.Duration, params ...string) (*workflow, error) {
	name, err := h.submit(template, params...)
	if err != nil {
		return nil, err
	}
	w, err := h.waitWorkflow(name, timeout)
	if err != nil {
		return w, err
	}
	if want != "" && w.Status.Phase != want {
		return w, fmt.Errorf("%s: want %s, got %s", template, want, w.describeWith(h.stepLogs(w)))
	}
	return w, nil
}

// waitWorkflow waits until the workflow has finished and returns it.
func (h *harness) waitWorkflow(name string, timeout time.Duration) (*workflow, error) {
	deadline := time.Now().Add(timeout)
	for {
		w, err := h.workflow(name)
		if err == nil && w.Status.FinishedAt != nil && w.Status.Phase != "Running" && w.Status.Phase != "Pending" && w.Status.Phase != "" {
			return w, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("workflow %s still %s after %s", name, w.Status.Phase, timeout)
			}
			return w, err
		}
		time.Sleep(time.Second)
	}
}

func (h *harness) waitFor(what string, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return nil
		}
		last = err
		time.Sleep(time.Second)
	}
	return fmt.Errorf("timeout after %s waiting for %s (last error: %v)", timeout, what, last)
}

// failedApps: the apps whose nodes of template failed or errored.
func (w *workflow) failedApps(tmpl string) []string {
	var out []string
	for app, n := range w.appNodes(tmpl) {
		if n.Phase == "Failed" || n.Phase == "Error" {
			out = append(out, app)
		}
	}
	sort.Strings(out)
	return out
}

// describe is a compact dump of a workflow's pod nodes, for failure
// messages; a failed node shows the last line its step printed.
func (w *workflow) describe() string { return w.describeWith(nil) }

func (w *workflow) describeWith(logs map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %q\n", w.Metadata.Name, w.Status.Phase, w.Status.Message)
	var ids []string
	for id := range w.Status.Nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		n := w.Status.Nodes[id]
		if n.Type != "Pod" && n.Type != "Plugin" {
			continue
		}
		fmt.Fprintf(&b, "  %-28s %-10s %s\n", n.DisplayName, n.Phase, n.Message)
		if l := logs[n.Name]; l != "" {
			fmt.Fprintf(&b, "      %s\n", l)
		}
	}
	return b.String()
}

// lastLine: the last line the main container of the workflow's pod node
// (by node name) printed that is not the executor's own.
func (h *harness) lastLine(w *workflow, node string) string {
	var l struct {
		Items []struct {
			Metadata struct {
				Name        string
				Annotations map[string]string
			}
		}
	}
	if err := h.getJSON(&l, "-n", argoNS, "get", "pods", "-l", "workflows.argoproj.io/workflow="+w.Metadata.Name); err != nil {
		return ""
	}
	out := ""
	for _, p := range l.Items {
		if p.Metadata.Annotations["workflows.argoproj.io/node-name"] != node {
			continue
		}
		text, _ := h.kubectl("-n", argoNS, "logs", p.Metadata.Name, "-c", "main", "--tail=20")
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			if line != "" && !strings.Contains(line, "argo=true") && !strings.HasPrefix(line, "Error: exit status") {
				out = line
			}
		}
	}
	return out
}

// stepLogs: for each failed pod node of the workflow (by node name), the
// last line of its main container that is not the executor's own.
func (h *harness) stepLogs(w *workflow) map[string]string {
	var l struct {
		Items []struct {
			Metadata struct {
				Name        string
				Annotations map[string]string
			}
		}
	}
	if err := h.getJSON(&l, "-n", argoNS, "get", "pods", "-l", "workflows.argoproj.io/workflow="+w.Metadata.Name); err != nil {
		return nil
	}
	out := map[string]string{}
	for _, p := range l.Items {
		node := p.Metadata.Annotations["workflows.argoproj.io/node-name"]
		failed := false
		for _, n := range w.Status.Nodes {
			if n.Name == node && n.Type == "Pod" && (n.Phase == "Failed" || n.Phase == "Error") {
				failed = true
			}
		}
		if !failed {
			continue
		}
		text, _ := h.kubectl("-n", argoNS, "logs", p.Metadata.Name, "-c", "main", "--tail=20")
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			if line != "" && !strings.Contains(line, "argo=true") && !strings.HasPrefix(line, "Error: exit status") {
				out[node] = line
			}
		}
	}
	return out
}

func sec(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// deployctlDir builds deployctl from this checkout once per run (a binary
// of an older run would apply older templates) and returns its directory,
// which the documented commands find on their PATH.
func (h *harness) deployctlDir() (string, error) {
	dir := filepath.Join(h.state, "bin")
	if !h.executorBuilt {
		if _, err := h.run(10*time.Minute, h.repo, "go", "build", "-o", filepath.Join(dir, "deployctl"), "./cmd/deployctl"); err != nil {
			return "", err
		}
		h.executorBuilt = true
	}
	return dir, nil
}

// ---- the documented commands (docs/quickstart.md, generated README.md)

// docBlocks reads the fenced blocks of a Markdown file marked for the e2e
// (<!-- e2e:NAME -->): the commands a person is told to type.
func docBlocks(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blocks, err := render.E2EBlocks(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return blocks, nil
}

// settingLine is one line of the Quickstart's settings block: NAME=value,
// and a comment.
var settingLine = regexp.MustCompile(`^([A-Z_]+)=(\S*)(\s+#.*)?$`)

// withSettings is the Quickstart's settings block with the values this
// cluster needs, substituted where the Quickstart says to edit: the value
// of the named lines, nothing else. A name the block lacks is an error (the
// document changed under the test).
func withSettings(block string, values map[string]string) (string, error) {
	lines := strings.Split(block, "\n")
	seen := map[string]bool{}
	for i, l := range lines {
		m := settingLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if v, ok := values[m[1]]; ok {
			lines[i] = m[1] + "=" + shellQuote(v) + m[3]
			seen[m[1]] = true
		}
	}
	for name := range values {
		if !seen[name] {
			return "", fmt.Errorf("the Quickstart's settings block has no line %s=", name)
		}
	}
	return strings.Join(lines, "\n"), nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runDoc runs documented blocks verbatim, in order, in one bash (errexit,
// pipefail) in dir, after prelude (the settings); the harness only puts
// deployctl and the cluster's kubectl and argo on PATH and sets KUBECONFIG,
// as a person following test/e2e/README.md does. env adds variables.
func (h *harness) runDoc(dir, prelude string, blocks []string, env ...string) (string, error) {
	bin, err := h.deployctlDir()
	if err != nil {
		return "", err
	}
	script := "set -euo pipefail\nexport PATH=" + shellQuote(bin) + ":$PATH\n" + prelude + "\n" + strings.Join(blocks, "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+h.kube, "PATH="+h.bin+":"+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("documented commands failed (%v):\n%s\n--- output:\n%s", err, strings.Join(blocks, "\n"), lastLines(string(out), 25))
	}
	return string(out), nil
}
