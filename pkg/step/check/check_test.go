package check

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestResourceCheckParsing(t *testing.T) {
	for spec, want := range map[string]string{
		"resource:/ConfigMap/ns/name":                           "ConfigMap ns/name",
		"resource:ceph.rook.io/CephCluster/rook-ceph/rook-ceph": "CephCluster.ceph.rook.io rook-ceph/rook-ceph",
		"resource:rbac.authorization.k8s.io/ClusterRole//admin": "ClusterRole.rbac.authorization.k8s.io admin",
	} {
		c, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.(*Resource).Ref.String(); got != want || c.String() != spec {
			t.Errorf("%s: %s / %s", spec, got, c)
		}
	}
}

// The probe never follows a redirect: a 302 is its answer (passing only
// when 302 is a wanted code), the other host is never reached; an endless
// body is not read past the probe's bound.
func TestHTTPProbeRedirectAndBody(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			zero := make([]byte, 1<<20)
			for range 64 {
				if _, err := w.Write(zero); err != nil {
					return
				}
			}
			return
		}
		http.Redirect(w, r, other.URL, http.StatusFound)
	}))
	defer srv.Close()
	for spec, want := range map[string]State{srv.URL + "=200": Waiting, srv.URL + "=302": Passed, srv.URL + "/big=200": Passed} {
		c, err := Parse("http:" + spec)
		if err != nil {
			t.Fatal(err)
		}
		if got, detail := c.(*HTTP).Attempt(context.Background(), 5*time.Second); got != want {
			t.Errorf("%s: %v (%s), want %v", spec, got, detail, want)
		}
	}
	if reached.Load() != 0 {
		t.Fatal("the probe followed the redirect")
	}
}
