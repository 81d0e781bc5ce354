package step

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

const widgetLua = "hs = {}\nhs.status = \"Healthy\"\nreturn hs\n"

// settingsFront serves GET /api/v1/settings with the given resource
// overrides (as argo-cd's server/settings does) and passes every other
// request to the fake Argo CD. It returns its address and a counter of
// settings requests.
func settingsFront(t *testing.T, f *fakeArgo, overrides map[string]map[string]string) (string, *atomic.Int64) {
	t.Helper()
	target, err := url.Parse("http://" + f.addr)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // the watch stream
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/settings" {
			proxy.ServeHTTP(w, r)
			return
		}
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"url": "https://argocd.example", "resourceOverrides": overrides})
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), &n
}

// untouched: the fake's Application was never created or synced.
func untouched(f *fakeArgo) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.app == nil && f.calls["create"] == 0 && f.calls["sync"] == 0 && len(f.syncRequests) == 0
}

func healthArgs(t *testing.T, reqs ...string) []string {
	args := []string{"sync-and-wait", "--app", "web-app", "--sync-timeout", "1500ms", "--health-timeout", "1500ms",
		"--manifest", writeManifest(t, "web-app")}
	for _, r := range reqs {
		args = append(args, "--health-customization", r)
	}
	return args
}

// A platform relying on a custom kind: without its health script in Argo CD
// the step refuses before it creates or syncs anything.
func TestHealthCustomizationAbsentRefusesBeforeSync(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{})
	addr, n := settingsFront(t, f, map[string]map[string]string{
		"*/*":                     {"ignoreDifferences": "jsonPointers:\n- /status\n"},
		"argoproj.io/Application": {"health.lua": "return {}"},
	})
	args := healthArgs(t, HealthRequirement("e2e.deployctl.dev/Widget", widgetLua), HealthRequirement("argoproj.io/Application", "return {}"))
	o := runStep(t, addr, args...)
	expect(t, o, exitcode.Failure, "refused before any sync", "missing resource.customizations.health.e2e.deployctl.dev_Widget")
	if strings.Contains(o.str("message"), "argoproj.io_Application") {
		t.Errorf("a present customization reported: %s", o.str("message"))
	}
	if n.Load() != 1 {
		t.Errorf("settings read %d times, want 1", n.Load())
	}
	if !untouched(f) {
		t.Errorf("the step changed Argo CD before the check: calls %v", f.calls)
	}
}

// The same platform with the script in place (trailing white space aside,
// as a YAML block style may leave it) deploys.
func TestHealthCustomizationPresentPasses(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{})
	addr, n := settingsFront(t, f, map[string]map[string]string{
		"e2e.deployctl.dev/Widget": {"health.lua": widgetLua + "\n  \n"},
	})
	args := healthArgs(t, HealthRequirement("e2e.deployctl.dev/Widget", strings.TrimSpace(widgetLua)))
	o := runStep(t, addr, args...)
	expect(t, o, exitcode.OK)
	if n.Load() != 1 || f.count("sync") != 1 {
		t.Errorf("settings read %d times, syncs %d; want 1 and 1", n.Load(), f.count("sync"))
	}
}

// Another script under the key (an older spec's, a hand edit) is not the
// health gate the platform was compiled for.
func TestHealthCustomizationDifferentScriptRefused(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{})
	addr, _ := settingsFront(t, f, map[string]map[string]string{
		"e2e.deployctl.dev/Widget": {"health.lua": "hs = {}\nhs.status = \"Healthy\"\nreturn hs -- always\n"},
	})
	args := healthArgs(t, HealthRequirement("e2e.deployctl.dev/Widget", widgetLua))
	o := runStep(t, addr, args...)
	expect(t, o, exitcode.Failure, "not the generated script: resource.customizations.health.e2e.deployctl.dev_Widget")
	if !untouched(f) {
		t.Errorf("calls %v", f.calls)
	}
}

func TestHealthCustomizationMalformed(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{})
	for _, bad := range []string{"e2e.deployctl.dev/Widget", "=sha256:" + strings.Repeat("0", 64), "a/B=sha256:abc", "a/B=md5:" + strings.Repeat("0", 64)} {
		args := healthArgs(t, bad)
		expect(t, runStep(t, f.addr, args...), exitcode.Invalid, "--health-customization")
	}
	if !untouched(f) {
		t.Errorf("calls %v", f.calls)
	}
}

func TestHealthRequirementFormat(t *testing.T) {
	got := HealthRequirement("ConfigMap", "x\n")
	if got != "ConfigMap=sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Errorf("HealthRequirement = %q", got)
	}
	if k := HealthCustomizationKey("acid.zalan.do/postgresql"); k != "resource.customizations.health.acid.zalan.do_postgresql" {
		t.Errorf("HealthCustomizationKey = %q", k)
	}
	if k := HealthCustomizationKey("ConfigMap"); k != "resource.customizations.health.ConfigMap" {
		t.Errorf("HealthCustomizationKey = %q", k)
	}
}
