package argocd

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deployctl/deployctl/internal/safehttp"
	"github.com/deployctl/deployctl/internal/safehttp/safehttptest"
)

// The answers of a hostile or broken server, against the one client: a
// 401 echoing the token, a redirect elsewhere, a gzip bomb.

const echoedToken = "0123456789abcdefghij0123456789ABCDEFGHIJ" // 40 characters

func hostileClient(t *testing.T, srv *httptest.Server) *Client {
	t.Helper()
	tok := t.TempDir() + "/token"
	if err := writeFile(tok, echoedToken+"\n"); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Server: strings.TrimPrefix(srv.URL, "http://"), Plaintext: true, TokenFile: tok, RequestTimeout: 10e9})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A 401 whose body echoes the token around where a message is cut: no
// piece of it reaches the error, in a plain body, a gateway body, or a
// watch stream's refusal.
func TestEchoedTokenNeverLeaks(t *testing.T) {
	for _, pad := range []int{0, 250, 290, safehttp.MessageMax - 20, safehttp.MessageMax - 3} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			if strings.Contains(r.URL.Path, "settings") {
				fmt.Fprintf(w, `{"error":"x","code":16,"message":"%s%s"}`, strings.Repeat("m", pad), tok)
				return
			}
			fmt.Fprintf(w, "%s%s", strings.Repeat("p", pad), tok)
		}))
		c := hostileClient(t, srv)
		_, err := c.Get(context.Background(), "web")
		safehttptest.NoPieceOf(t, echoedToken, err.Error())
		_, err = c.Settings(context.Background())
		safehttptest.NoPieceOf(t, echoedToken, err.Error())
		_, err = c.Watch(context.Background(), "web")
		safehttptest.NoPieceOf(t, echoedToken, err.Error())
		if !IsAuth(err) {
			t.Errorf("a 401 is an auth error: %v", err)
		}
		srv.Close()
	}
}

// A redirect to another host:port is refused: no request carrying the
// token reaches it, its "Healthy" is never read, and the error (not
// retried) names where it pointed.
func TestRedirectElsewhereRefused(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		fmt.Fprint(w, `{"metadata":{"name":"web"},"status":{"health":{"status":"Healthy"},"sync":{"status":"Synced"}}}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	c := hostileClient(t, srv)
	app, err := c.Get(context.Background(), "web")
	if app != nil || err == nil || IsTransient(err) || IsNotFound(err) {
		t.Fatalf("get: %v, %v", app, err)
	}
	if !strings.Contains(err.Error(), "redirect to "+other.URL+"/api/v1/applications/web") || !strings.Contains(err.Error(), "HTTP 302") {
		t.Errorf("the error does not say where it pointed: %v", err)
	}
	if _, err := c.Watch(context.Background(), "web"); err == nil || IsTransient(err) {
		t.Errorf("watch: %v", err)
	}
	if err := c.ManagedTargets(context.Background(), "", "web", func(ManagedTarget) error { return nil }); err == nil {
		t.Errorf("managed resources followed the redirect")
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("%d requests with the token reached the other server", n)
	}
}

// A gzip bomb is refused at the answer's bound, counted after
// decompression, and not retried; a watch stream bounds each message.
func TestGzipBombRefused(t *testing.T) {
	bomb := safehttptest.GzipBomb(`{"metadata":{"name":"web"},"x":"`, int(safehttp.AnswerLimit>>20)+2, `"}`)
	srv := safehttptest.GzipServer(t, bomb)
	c := hostileClient(t, srv)
	_, err := c.Get(context.Background(), "web")
	if err == nil || IsTransient(err) || !strings.Contains(err.Error(), "larger than the 16 MiB limit") {
		t.Fatalf("%d KiB of gzip: %v", len(bomb)>>10, err)
	}
	s, err := c.Watch(context.Background(), "web")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err == nil || IsTransient(err) || !strings.Contains(err.Error(), "larger than the 16 MiB limit") {
		t.Fatalf("stream: %v", err)
	}
}
