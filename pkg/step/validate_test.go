package step

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/gitops-engine/pkg/health"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

// appsServer serves GET and list for a fixed set of applications, as Argo CD
// does (403 for an absent one); unavailable makes every request a 503.
func appsServer(t *testing.T, unavailable bool, healths map[string]health.HealthStatusCode) string {
	apps := map[string]*v1alpha1.Application{}
	for name, h := range healths {
		a := newApp(name)
		a.ResourceVersion = "7"
		a.Status.Health = v1alpha1.HealthStatus{Status: h, Message: name + " is " + string(h)}
		a.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "abc123"}
		apps[name] = a
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+fakeToken {
			gwError(w, 401, 16, "no session")
			return
		}
		if unavailable {
			http.Error(w, "no healthy upstream", 503)
			return
		}
		if r.Method != http.MethodGet {
			t.Errorf("validate must be read-only, got %s %s", r.Method, r.URL)
			gwError(w, 405, 12, "read-only")
			return
		}
		if r.URL.Path == "/api/v1/applications" {
			items := []*v1alpha1.Application{}
			if a := apps[r.URL.Query().Get("name")]; a != nil {
				items = append(items, a)
			}
			json.NewEncoder(w).Encode(map[string]any{"items": items})
			return
		}
		a := apps[strings.TrimPrefix(r.URL.Path, "/api/v1/applications/")]
		if a == nil {
			gwError(w, 403, 7, "permission denied")
			return
		}
		json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestValidateAggregate(t *testing.T) {
	t.Parallel()
	addr := appsServer(t, false, map[string]health.HealthStatusCode{
		"h1": healthy, "h2": healthy, "p": progressing, "d": degraded, "m": missing, "s": suspended, "u": unknown, "new": "",
	})
	cases := []struct {
		apps      []string
		code      int
		aggregate string
	}{
		{[]string{"h1", "h2"}, exitcode.OK, "Healthy"},
		{[]string{"h1", "p"}, exitcode.Partial, "Progressing"},
		{[]string{"h1", "new"}, exitcode.Partial, "Progressing"},
		{[]string{"h1", "p", "d"}, exitcode.Partial, "Degraded"},
		{[]string{"h1", "m"}, exitcode.Partial, "Degraded"},
		{[]string{"h1", "s"}, exitcode.Partial, "Degraded"},
		{[]string{"u", "h1"}, exitcode.Partial, "Degraded"},
		{[]string{"h1", "p", "d", "absent"}, exitcode.Failure, "Failed"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.apps, ","), func(t *testing.T) {
			t.Parallel()
			args := []string{"validate"}
			for _, a := range c.apps {
				args = append(args, "--app", a)
			}
			o := runStep(t, addr, args...)
			if o.code != c.code || o.str("aggregate") != c.aggregate {
				t.Fatalf("exit %d aggregate %s, want %d %s: %s", o.code, o.str("aggregate"), c.code, c.aggregate, o.str("message"))
			}
			apps := o.result["apps"].([]any)
			if len(apps) != len(c.apps) {
				t.Fatalf("apps %v", apps)
			}
			first := apps[0].(map[string]any)
			if first["app"] != c.apps[0] || first["syncStatus"] == "" {
				t.Errorf("entry %v", first)
			}
		})
	}
}

func TestValidateAbsentAppSaysSo(t *testing.T) {
	t.Parallel()
	o := runStep(t, appsServer(t, false, map[string]health.HealthStatusCode{"h1": healthy}), "validate", "--app", "h1", "--app", "gone")
	expect(t, o, exitcode.Failure, "gone (the application does not exist)")
}

func TestValidateAPIUnavailable(t *testing.T) {
	t.Parallel()
	o := runStep(t, appsServer(t, true, nil), "validate", "--app", "a", "--app", "b")
	expect(t, o, exitcode.Transient, "could not read 2 application(s)")
	if o.str("aggregate") != "Failed" {
		t.Errorf("aggregate %s", o.str("aggregate"))
	}
}

// An invalid invocation still writes a result and one plain line.
func TestValidateInvalidInvocation(t *testing.T) {
	resultFile := t.TempDir() + "/r.json"
	var stdout, stderr strings.Builder
	env := map[string]string{"RESULT_FILE": resultFile}
	code := run(t.Context(), []string{"validate", "--app", "a"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stdout, &stderr, testTiming())
	if code != exitcode.Invalid || stdout.String() != "validate: InvalidArguments (exit 3): --server (ARGOCD_SERVER) is required\n" {
		t.Fatalf("exit %d, stdout %q", code, stdout.String())
	}
	if _, err := os.Stat(resultFile); err != nil {
		t.Fatal(err)
	}
}

// An Argo CD address that redirects to another host:port: validate never
// believes that host's "Healthy" (the redirect is refused before any
// request, token and all, reaches it) and says where it pointed.
func TestValidateRefusesRedirect(t *testing.T) {
	t.Parallel()
	healthyAddr := appsServer(t, false, map[string]health.HealthStatusCode{"h1": healthy})
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1) // would answer as the healthy server does
		http.Redirect(w, r, "http://"+healthyAddr+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(other.Close)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(proxy.Close)
	o := runStep(t, strings.TrimPrefix(proxy.URL, "http://"), "validate", "--app", "h1")
	if o.code == exitcode.OK || o.str("aggregate") == "Healthy" {
		t.Fatalf("exit %d aggregate %s: the other host was believed", o.code, o.str("aggregate"))
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("%d requests reached the other host", n)
	}
	if !strings.Contains(string(o.raw), "redirect to "+other.URL+"/api/v1/applications/h1") {
		t.Errorf("the result does not say where it pointed: %s", o.raw)
	}
}
