//go:build e2e

package e2e

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// ---- 11: dependencies from what the apps deploy, read live (issue 16)
//
// Runs right after step 7, while the platform is deployed and Healthy.

// liveNeeds is every dependency the scenario platform's resources show,
// written by hand from testdata/gitrepo/apps: widget's Widget needs the
// CRD widget-crd deploys. Nothing else: db's PVC names StorageClass
// e2e-manual, which the harness creates (no app deploys it); the namespace
// platform is no app's Namespace object; the other apps deploy only
// Deployments, Services, a StatefulSet and a ConfigMap, which no rule reads
// as a need of another app (their real dependencies are in configuration:
// the spec declares them).
var liveNeeds = map[string]string{"widget": "widget-crd # needs CRD widgets.e2e.deployctl.dev from widget-crd"}

// needsLine is an entry of an imported spec that a resource explains;
// appLine starts an app.
var (
	needsLine = regexp.MustCompile(`^\s*- (\S+) # (.*needs .*)$`)
	appLine   = regexp.MustCompile(`^\s*- name: (\S+)$`)
)

func (s *scenario) liveDeps() (string, error) {
	h := s.h
	bin, err := h.deployctlDir()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(s.work, "deps-")
	if err != nil {
		return "", err
	}
	// The deployctl account's token (the Quickstart's section 6 Secret) may
	// read the platform's Applications: what --live needs.
	enc, err := h.kubectl("-n", argoNS, "get", "secret", "deployctl-argocd-token", "-o", "jsonpath={.data.token}")
	if err != nil {
		return "", err
	}
	tok, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return "", fmt.Errorf("token Secret: %w", err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, tok, 0o600); err != nil {
		return "", err
	}
	dump, err := h.kubectl("-n", argocdNS, "get", "applications.argoproj.io", "-l", "deployctl.dev/platform="+s.p.Name, "-o", "yaml")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "apps.yaml"), []byte(dump), 0o600); err != nil {
		return "", err
	}
	live := []string{"--live", "--server", strings.TrimPrefix(argocdURL, "https://"), "--token-file", tokenFile,
		"--ca-file", filepath.Join(h.state, "pki", "ca.crt")}
	deployctl := func(args ...string) (string, int, error) {
		cmd := exec.Command(filepath.Join(bin, "deployctl"), args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode(), nil
		}
		return string(out), 0, err
	}
	var errs []string

	// 1. import --live: exactly the dependencies the resources show.
	out, code, err := deployctl(append([]string{"import", "apps.yaml", "--name", "e2e-live", "--stack-from", "label=deployctl.dev/stack", "-o", "imported.yaml"}, live...)...)
	if err != nil || code != 0 {
		return "", fmt.Errorf("import --live: exit %d, %v:\n%s", code, err, lastLines(out, 15))
	}
	if strings.Contains(out, string(tok)) {
		errs = append(errs, "import --live printed the token")
	}
	imported, err := os.ReadFile(filepath.Join(dir, "imported.yaml"))
	if err != nil {
		return "", err
	}
	got := map[string]string{}
	app := ""
	for _, l := range strings.Split(string(imported), "\n") {
		if m := appLine.FindStringSubmatch(l); m != nil {
			app = m[1]
		}
		if m := needsLine.FindStringSubmatch(l); m != nil {
			if got[app] != "" {
				errs = append(errs, fmt.Sprintf("%s: a second inferred entry %q", app, l))
			}
			got[app] = m[1] + " # " + m[2]
		}
	}
	for a, want := range liveNeeds {
		if got[a] != want {
			errs = append(errs, fmt.Sprintf("%s: inferred %q, want %q", a, got[a], want))
		}
	}
	for a, g := range got {
		if _, ok := liveNeeds[a]; !ok {
			errs = append(errs, fmt.Sprintf("false edge %s → %s", a, g))
		}
	}

	// 2. plan --explain-edges --live on the platform's spec: nothing missing.
	spec := filepath.Join(h.e2eDir, "testdata", "platform.yaml")
	out, code, err = deployctl(append([]string{"plan", spec, "--explain-edges"}, live...)...)
	if err != nil || code != 0 || !strings.Contains(out, "widget → widget-crd: widget needs CRD widgets.e2e.deployctl.dev from widget-crd") {
		errs = append(errs, fmt.Sprintf("plan --explain-edges --live on the spec: exit %d, %v:\n%s", code, err, lastLines(out, 12)))
	}

	// 3. The same spec without widget's dependsOn: the missing edge is an
	// error (exit 3) with its evidence.
	raw, err := os.ReadFile(spec)
	if err != nil {
		return "", err
	}
	cut := strings.Replace(string(raw), "      dependsOn: [widget-crd]\n", "", 1)
	if cut == string(raw) {
		return "", fmt.Errorf("%s: widget's dependsOn line not found (the fixture changed under the test)", spec)
	}
	if err := os.WriteFile(filepath.Join(dir, "missing.yaml"), []byte(cut), 0o600); err != nil {
		return "", err
	}
	out, code, err = deployctl(append([]string{"plan", "missing.yaml", "--explain-edges"}, live...)...)
	if err != nil || code != 3 || !strings.Contains(out, "error: missing dependency widget → widget-crd") {
		errs = append(errs, fmt.Sprintf("plan --explain-edges --live without widget's dependsOn: exit %d (want 3), %v:\n%s", code, err, lastLines(out, 12)))
	}
	if len(errs) > 0 {
		return "", errors.New(strings.Join(errs, "; "))
	}
	return fmt.Sprintf("import --live of the %d deployed Applications: exactly the hand-written resource dependency (widget → widget-crd, CRD), no false edge; plan --explain-edges --live: ok on the spec, the removed widget → widget-crd reported missing (exit 3) with its evidence", len(s.p.Apps)), nil
}
