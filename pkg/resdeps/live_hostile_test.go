package resdeps

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deployctl/deployctl/internal/safehttp/safehttptest"
)

// The answers of a hostile or broken Argo CD to --live, one class each.

const longToken = "0123456789abcdefghij0123456789ABCDEFGHIJ" // 40 characters, as Argo CD's JWTs are longer

func hostileLive(t *testing.T, srv *httptest.Server) *Live { return liveClientWith(t, srv, longToken) }

// A 401 echoing the token where a message used to be cut (300 bytes):
// no piece of it of 4 characters or more is in the error.
func TestLiveEchoedTokenNeverLeaks(t *testing.T) {
	for _, pad := range []int{262, 270, 290, 298, 1000} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"code":16,"message":"%s %s"}`, strings.Repeat("m", pad), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		}))
		_, err := hostileLive(t, srv).Objects(context.Background(), "argocd", "web")
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), "managed resources of Application argocd/web: HTTP 401") {
			t.Fatalf("pad %d: %v", pad, err)
		}
		safehttptest.NoPieceOf(t, longToken, err.Error())
	}
}

// A 302 to another host:port is refused: no request with the token
// reaches it, and its answer is never taken for the app's resources.
func TestLiveRedirectRefused(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		fmt.Fprint(w, `{"items":[{"kind":"ConfigMap","name":"x","targetState":"{\"kind\":\"ConfigMap\"}"}]}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	apps, err := hostileLive(t, srv).Inventory(context.Background(), []AppRef{{App: "web", Namespace: "argocd", Application: "web"}})
	if err == nil || !strings.Contains(err.Error(), "HTTP 302") || !strings.Contains(err.Error(), "redirect to "+other.URL) {
		t.Fatalf("err = %v", err)
	}
	if reached.Load() != 0 || len(apps[0].Objects) != 0 {
		t.Fatalf("%d requests reached the other server; objects %v", reached.Load(), apps[0].Objects)
	}
}

// A gzip bomb is refused at the answer's bound, after decompression.
func TestLiveGzipBomb(t *testing.T) {
	bomb := safehttptest.GzipBomb(`{"items":[{"kind":"ConfigMap","name":"x","targetState":"`, 65, `"}]}`)
	srv := safehttptest.GzipServer(t, bomb)
	_, err := hostileLive(t, srv).Objects(context.Background(), "argocd", "web")
	if err == nil || !strings.Contains(err.Error(), "larger than the 64 MiB limit") {
		t.Fatalf("%d KiB of gzip: %v", len(bomb)>>10, err)
	}
}

// The inventory keeps objects, never answers, and all of them together
// within its bound: past it, the import is refused once, saying so.
func TestLiveInventoryBounded(t *testing.T) {
	state := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":%q}}`, strings.Repeat("d", 100<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"items":[{"kind":"ConfigMap","name":"c","targetState":%q,"liveState":%q,"normalizedLiveState":%q}]}`, state, state, state)
	}))
	defer srv.Close()
	l := hostileLive(t, srv)
	l.limit = 1 << 20 // ten apps' worth
	var refs []AppRef
	for i := range 24 {
		refs = append(refs, AppRef{App: fmt.Sprint("app", i), Namespace: "argocd", Application: fmt.Sprint("app", i)})
	}
	apps, err := l.Inventory(context.Background(), refs)
	if err == nil || apps != nil || strings.Count(err.Error(), "limit of one import input") != 1 {
		t.Fatalf("apps %d, err = %v", len(apps), err)
	}
	if kept := l.kept.Load(); kept > l.limit+liveReaders*int64(len(state)) {
		t.Fatalf("kept %d bytes past the %d bound", kept, l.limit)
	}
	l = hostileLive(t, srv)
	if apps, err := l.Inventory(context.Background(), refs); err != nil || len(apps) != 24 || len(apps[23].Objects) != 1 {
		t.Fatalf("within the bound: %v", err)
	}
}
