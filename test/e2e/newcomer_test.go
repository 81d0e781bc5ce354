//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Step 13 (issue 27): the Quickstart as a newcomer runs it. Steps 1–8 run
// its blocks with the test platform, in a work folder the harness made,
// from the harness's own process; a reader has none of that. Here every
// block runs in order in ONE fresh shell — its environment only HOME (a
// new, empty one), PATH and KUBECONFIG, as `env -i` makes it, the last two
// what test/e2e/README.md exports; started in /, with umask 022 as a login
// shell sets it — with the example
// spec the Quickstart names, written by its own block. The only values
// changed are the Quickstart's settings that test/e2e/README.md gives for
// this cluster (its block e2e:local-settings, read here, not copied):
// items 1 (the working folder), 2 (the example deploys with the edits the
// Quickstart says), 8 (umask) and 10 (settings that need no earlier `cd`)
// of issue 27 cannot come back unnoticed.

// newcomerPlatform is the example's metadata.name, the Quickstart's PLATFORM.
const newcomerPlatform = "minimal"

// localSettingNames are the settings test/e2e/README.md gives for this
// cluster; a block with others (or fewer) means the document changed.
var localSettingNames = []string{"DEPLOYCTL_SRC", "IMAGE", "GIT_REPO", "ARGOCD_URL", "ARGOCD_CA"}

// localSettings reads test/e2e/README.md's e2e:local-settings block as
// NAME → value, $HOME replaced by home (the settings are single-quoted
// when substituted) and the default state folder by this run's.
func (h *harness) localSettings(home string) (map[string]string, error) {
	blocks, err := docBlocks(filepath.Join(h.e2eDir, "README.md"))
	if err != nil {
		return nil, err
	}
	b, ok := blocks["local-settings"]
	if !ok {
		return nil, errors.New("test/e2e/README.md has no block marked e2e:local-settings")
	}
	out := map[string]string{}
	for _, l := range strings.Split(b, "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		m := settingLine.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("test/e2e/README.md, e2e:local-settings: %q is not NAME=value", l)
		}
		v := strings.ReplaceAll(m[2], "$HOME", home)
		if strings.Contains(v, "$") || !(strings.HasPrefix(v, "/") || strings.Contains(v, "://") || m[1] == "IMAGE") {
			return nil, fmt.Errorf("test/e2e/README.md, e2e:local-settings: %s=%s is not absolute (a new terminal would not find it)", m[1], m[2])
		}
		out[m[1]] = strings.Replace(v, "/var/tmp/deployctl-e2e/", h.state+"/", 1)
	}
	for _, n := range localSettingNames {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("test/e2e/README.md, e2e:local-settings: no %s=", n)
		}
	}
	if len(out) != len(localSettingNames) {
		return nil, fmt.Errorf("test/e2e/README.md, e2e:local-settings: %d settings, want exactly %v", len(out), localSettingNames)
	}
	return out, nil
}

// newcomerBlocks are the Quickstart's blocks in document order, as a
// reader runs them, with the harness's markers between them: the time, and
// after the token block the shell's umask.
var newcomerBlocks = []string{"workdir", "example", "generate", "apply", "token", "secrets", "deploy", "validate", "executor", "teardown"}

func (s *scenario) newcomer() (_ string, err error) {
	h := s.h
	qs, err := docBlocks(filepath.Join(h.repo, "docs", "quickstart.md"))
	if err != nil {
		return "", err
	}
	home, err := os.MkdirTemp("", "deployctl-newcomer-")
	if err != nil {
		return "", err
	}
	defer func() { // kept for a look when the step failed (the detail names it)
		if err == nil {
			os.RemoveAll(home)
		}
	}()
	if rel, err := filepath.Rel(h.repo, home); err == nil && !strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("the newcomer's home %s is inside the repository", home)
	}
	local, err := h.localSettings(home)
	if err != nil {
		return "", err
	}
	// The clone where test/e2e/README.md says it is (DEPLOYCTL_SRC), if
	// that is in the new home: this checkout.
	if src := local["DEPLOYCTL_SRC"]; strings.HasPrefix(src, home+"/") {
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			return "", err
		}
		if err := os.Symlink(h.repo, src); err != nil {
			return "", err
		}
	} else if src != h.repo {
		return "", fmt.Errorf("DEPLOYCTL_SRC=%s: want $HOME/… (the newcomer's clone) or this checkout", src)
	}
	settings, err := withSettings(qs["settings"], local)
	if err != nil {
		return "", err
	}
	// A cluster nobody prepared, as in step 1; then nothing of an earlier
	// run of this step.
	if err := s.unprepare(); err != nil {
		return "", fmt.Errorf("unprepare: %w", err)
	}
	if _, err := h.kubectl("-n", argocdNS, "delete", "applications.argoproj.io", "-l", "deployctl.dev/platform="+newcomerPlatform, "--wait=true"); err != nil {
		return "", err
	}
	// The clone must come out as it went in (not a Git checkout: not
	// checked, and said so).
	gitStatus := func() (string, error) {
		return h.run(time.Minute, h.repo, "git", "status", "--porcelain", "--untracked-files=all")
	}
	repoBefore, gitErr := gitStatus()
	// The Quickstart's defaults: no REPORT_DIR in a fresh shell.
	report, metrics := "/tmp/deployctl-report.json", "/tmp/deployctl-metrics.prom"
	_, _ = os.Remove(report), os.Remove(metrics)

	script := "set -euo pipefail\numask 022\n" + settings + "\n"
	for _, n := range newcomerBlocks {
		b, ok := qs[n]
		if !ok {
			return "", fmt.Errorf("docs/quickstart.md has no block marked e2e:%s", n)
		}
		script += "echo \"e2e-mark " + n + " $EPOCHREALTIME\"\n" + b + "\n"
		if n == "token" {
			script += "echo \"e2e-umask $(umask)\"\n"
		}
	}
	script += "echo \"e2e-mark end $EPOCHREALTIME\"\necho \"e2e-pwd $PWD\"\n"
	out, err := h.runFresh(home, script)
	if err != nil {
		return "", fmt.Errorf("%w\n(the shell's home, kept: %s)", err, home)
	}
	var errs []string
	marks := map[string]float64{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 3 && f[0] == "e2e-mark":
			t, _ := strconv.ParseFloat(f[2], 64)
			marks[f[1]] = t
		case len(f) == 2 && f[0] == "e2e-umask" && f[1] != "0022":
			errs = append(errs, "the token block left umask "+f[1]+" in the reader's shell (want 0022)")
		}
	}
	if !strings.Contains(out, "e2e-umask 0022") && len(errs) == 0 {
		errs = append(errs, "no umask read after the token block")
	}
	took := func(from, to string) float64 { return marks[to] - marks[from] }
	// Item 1: everything in the working folder, nothing in the clone.
	work := filepath.Join(home, "deployctl-quickstart")
	if !strings.Contains(out, "e2e-pwd "+work+"\n") {
		errs = append(errs, "the blocks did not end in the working folder "+work)
	}
	if _, err := os.Stat(filepath.Join(work, "generated", newcomerPlatform, ".deployctl-generated")); err != nil {
		errs = append(errs, "no generated tree in the working folder: "+err.Error())
	}
	for _, f := range []string{"admin.password", "admin.header", "deployctl.token"} {
		if _, err := os.Stat(filepath.Join(work, f)); err == nil {
			errs = append(errs, "credential file "+f+" left in the working folder")
		}
	}
	clone := "clone untouched"
	if gitErr != nil {
		clone = "clone not checked (not a Git checkout: " + gitErr.Error() + ")"
	} else if after, err := gitStatus(); err != nil || after != repoBefore {
		errs = append(errs, fmt.Sprintf("the Quickstart changed the clone (%v): git status was\n%s\nis\n%s", err, repoBefore, after))
	}
	// Item 2: the example, with the reader's two values and nothing else.
	spec, err := os.ReadFile(filepath.Join(work, "platform.yaml"))
	if err != nil {
		return "", err
	}
	for _, v := range []string{local["IMAGE"], local["GIT_REPO"]} {
		if !strings.Contains(string(spec), v) {
			errs = append(errs, "the example spec lacks "+v)
		}
	}
	if strings.Contains(string(spec), "example.com") {
		errs = append(errs, "the example spec still names example.com")
	}
	// Item 5: the validate block shows each app and the aggregate.
	if !strings.Contains(out, "  aggregate Healthy · 4 Healthy\n") {
		errs = append(errs, "the validate block did not show 'aggregate Healthy · 4 Healthy':\n"+lastLines(out, 30))
	}
	for _, a := range []string{"cert-manager", "ingress-nginx", "database", "web"} {
		if !strings.Contains(out, "\n"+a+strings.Repeat(" ", 29-len(a))+"Healthy") {
			errs = append(errs, "the validate block shows no Healthy line for "+a)
		}
	}
	// Items 6, 7: the executor after a deploy by hand has nothing to do;
	// its report and metrics are where the Quickstart says.
	var rep struct{ Status, Platform string }
	if raw, err := os.ReadFile(report); err != nil || json.Unmarshal(raw, &rep) != nil || rep.Status != "UpToDate" || rep.Platform != newcomerPlatform {
		errs = append(errs, fmt.Sprintf("report %s: %+v (%v), want the executor's UpToDate for %s", report, rep, err, newcomerPlatform))
	}
	if _, err := os.Stat(metrics); err != nil {
		errs = append(errs, "no metrics beside the report: "+err.Error())
	}
	// The teardown block left nothing of the platform.
	if left, err := h.kubectl("-n", argocdNS, "get", "applications.argoproj.io", "-l", "deployctl.dev/platform="+newcomerPlatform, "-o", "name"); err != nil || strings.TrimSpace(left) != "" {
		errs = append(errs, fmt.Sprintf("after the teardown block: %q %v", strings.TrimSpace(left), err))
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("%s (the shell's home, kept: %s)", strings.Join(errs, "; "), home)
	}
	return fmt.Sprintf("fresh shell (env -i, HOME %s, cwd /, umask 022), settings of test/e2e/README.md; example written, generated in the working folder, %s; setup %.1fs (umask 0022 after token), deploy %.1fs, validate %.1fs (aggregate Healthy · 4 Healthy), executor %.1fs (UpToDate, report and metrics in /tmp), teardown %.1fs, nothing left",
		home, clone, took("workdir", "deploy"), took("deploy", "validate"), took("validate", "executor"), took("executor", "teardown"), took("teardown", "end")), nil
}

// runFresh runs script as a person in a new terminal would: bash without
// profile or rc files, an environment of HOME, PATH (deployctl's and the
// cluster's clients before the system's) and KUBECONFIG only, in /. The
// script sets its own umask: nothing of the test process is inherited.
func (h *harness) runFresh(home, script string) (string, error) {
	bin, err := h.deployctlDir()
	if err != nil {
		return "", err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "--noprofile", "--norc", "-c", script)
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=" + home, "KUBECONFIG=" + h.kube,
		"PATH=" + bin + ":" + h.bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("the Quickstart in a fresh shell failed (%v):\n--- output:\n%s", err, lastLines(string(out), 40))
	}
	return string(out), nil
}
