package step

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

func TestResourceChecks(t *testing.T) {
	t.Parallel()
	ceph := v1alpha1.ResourceNode{ResourceRef: v1alpha1.ResourceRef{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster", Namespace: "rook-ceph", Name: "rook-ceph"},
		Health: &v1alpha1.HealthStatus{Status: degraded, Message: "HEALTH_ERR"}}
	cases := []struct {
		name  string
		check string
		code  int
		msg   string
	}{
		{"healthy node", "resource:apps/Deployment/ns/web", exitcode.OK, ""},
		{"node without health", "resource:/ConfigMap/ns/cfg", exitcode.OK, ""},
		{"absent node", "resource:/ConfigMap/ns/nope", exitcode.Failure, "check resource:/ConfigMap/ns/nope did not pass before the health deadline; last: not in the application's resource tree"},
		{"degraded node fails at once", "resource:ceph.rook.io/CephCluster/rook-ceph/rook-ceph", exitcode.Failure, "check resource:ceph.rook.io/CephCluster/rook-ceph/rook-ceph failed: Degraded (HEALTH_ERR)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sc := scenario{exists: true, before: healthy}
			f := newFakeArgo(t, sc)
			f.mu.Lock()
			f.sc.tree = append(f.sc.tree, ceph)
			f.mu.Unlock()
			o := syncAndWait(t, f, "--check", c.check, "--health-timeout", "700ms")
			if c.msg == "" {
				expect(t, o, c.code)
			} else {
				expect(t, o, c.code, c.msg)
			}
			checks := o.result["checks"].([]any)
			if len(checks) != 1 || (checks[0].(map[string]any)["passed"] == true) != (c.code == exitcode.OK) {
				t.Errorf("checks %v", checks)
			}
		})
	}
}

// An HTTP readiness probe: retried until it answers an expected code.
func TestHTTPCheck(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	vault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/sealed":
			w.WriteHeader(503)
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case calls.Add(1) < 3:
			w.WriteHeader(503) // sealed for a while
		default:
			w.WriteHeader(200)
		}
	}))
	defer vault.Close()

	f := newFakeArgo(t, scenario{exists: true, before: healthy})
	o := syncAndWait(t, f, "--check", "http:"+vault.URL+"/v1/sys/health=200", "--check", "resource:/ConfigMap/ns/cfg")
	expect(t, o, exitcode.OK)
	if c := o.result["checks"].([]any)[0].(map[string]any); c["attempts"].(float64) != 3 || c["detail"] != "HTTP 200" {
		t.Errorf("check %v", c)
	}

	f = newFakeArgo(t, scenario{exists: true, before: healthy})
	o = syncAndWait(t, f, "--check", "http:"+vault.URL+"/sealed=200,429", "--health-timeout", "3s")
	expect(t, o, exitcode.Failure, "/sealed=200,429 did not pass before the health deadline; last: HTTP 503")

	f = newFakeArgo(t, scenario{exists: true, before: healthy})
	o = syncAndWait(t, f, "--check", "http:"+vault.URL+"/redirect=200", "--health-timeout", "3s")
	expect(t, o, exitcode.Failure, "last: HTTP 302")
}
