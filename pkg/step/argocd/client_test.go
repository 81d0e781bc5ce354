package argocd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

func TestErrorClassification(t *testing.T) {
	gw := func(status, code int, msg string) error {
		return parseAPIError("op", status, []byte(fmt.Sprintf(`{"error":%q,"code":%d,"message":%q}`, msg, code, msg)))
	}
	cases := []struct {
		name                                   string
		err                                    error
		notFound, auth, transient, unsupported bool
	}{
		{"not found", gw(404, 5, `applications.argoproj.io "x" not found`), true, false, false, true},
		{"unauthenticated", gw(401, 16, "invalid session: token is not valid yet"), false, true, false, false},
		{"permission denied", gw(403, 7, "permission denied"), false, true, false, false},
		// FailedPrecondition → HTTP 400 in grpc-gateway v1; only the text says it.
		{"operation in progress", gw(400, 9, "error setting app operation: rpc error: code = FailedPrecondition desc = another operation is already in progress"), false, false, true, false},
		{"bad request", gw(400, 3, "application spec for x is invalid"), false, false, false, false},
		{"unavailable", gw(503, 14, "connection refused"), false, false, true, false},
		{"internal", gw(500, 2, "boom"), false, false, true, false},
		{"proxy 502 html", parseAPIError("op", 502, []byte("<html>Bad Gateway</html>")), false, false, true, false},
		{"empty 504", parseAPIError("op", 504, nil), false, false, true, false},
		{"conflict", gw(409, 10, "the object has been modified"), false, false, true, false},
		{"too many", gw(429, 8, "slow down"), false, false, true, false},
		{"not implemented", parseAPIError("op", 501, nil), false, false, false, true},
		{"method not allowed", parseAPIError("op", 405, nil), false, false, false, true},
		{"network", &NetError{Op: "op", Err: errors.New("connection refused")}, false, false, true, false},
		{"plain", errors.New("decoding"), false, false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wrapped := fmt.Errorf("context: %w", c.err)
			if IsNotFound(wrapped) != c.notFound || IsAuth(wrapped) != c.auth || IsTransient(wrapped) != c.transient || IsUnsupported(wrapped) != c.unsupported {
				t.Fatalf("%v: notFound %v auth %v transient %v unsupported %v", c.err, IsNotFound(wrapped), IsAuth(wrapped), IsTransient(wrapped), IsUnsupported(wrapped))
			}
		})
	}
	if e := parseAPIError("get x", 502, []byte("<html>Bad Gateway</html>")); e.Error() != "get x: <html>Bad Gateway</html> (HTTP 502)" {
		t.Fatalf("message %q", e.Error())
	}
	if e := parseAPIError("get x", 504, nil); e.Message != "Gateway Timeout" {
		t.Fatalf("message %q", e.Message)
	}
}

// A request that ran out of time may still be carried out; one refused or
// answered may not (the sync's late-answer wait depends on it).
func TestUnanswered(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&NetError{Op: "op", Err: context.DeadlineExceeded}, true},
		{&NetError{Op: "op", Err: &net.OpError{Op: "read", Err: timeoutError{}}}, true},
		{parseAPIError("op", 504, nil), true},
		{parseAPIError("op", 500, []byte(`{"error":"x","code":4,"message":"context deadline exceeded"}`)), true},
		{&NetError{Op: "op", Err: errors.New("connection refused")}, false},
		{parseAPIError("op", 503, nil), false},
		{parseAPIError("op", 400, []byte(`{"error":"x","code":9,"message":"another operation is already in progress"}`)), false},
		{nil, false},
	} {
		if got := IsUnanswered(fmt.Errorf("sync: %w", c.err)); got != c.want {
			t.Errorf("IsUnanswered(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// Argo CD answers 403 for an absent app when no project is given; the
// client must see through that via the list, and keep real 403s.
func TestGetAbsentAppBehind403(t *testing.T) {
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/applications":
			lists.Add(1)
			if r.URL.Query().Get("name") == "visible" {
				fmt.Fprint(w, `{"items":[{"metadata":{"name":"visible"}}]}`)
				return
			}
			fmt.Fprint(w, `{"items":[]}`)
		default:
			w.WriteHeader(403)
			fmt.Fprint(w, `{"error":"permission denied","code":7,"message":"permission denied"}`)
		}
	}))
	defer srv.Close()
	c := testClient(t, srv.URL, "")
	_, err := c.Get(t.Context(), "absent")
	if !IsNotFound(err) || IsAuth(err) {
		t.Fatalf("absent app: %v", err)
	}
	_, err = c.Get(t.Context(), "visible")
	if IsNotFound(err) || !IsAuth(err) {
		t.Fatalf("real 403: %v", err)
	}
	if lists.Load() != 2 {
		t.Fatalf("lists %d", lists.Load())
	}
}

func TestRequestsCarryTokenPathsAndQueries(t *testing.T) {
	type req struct{ method, path, query, auth string }
	var got []req
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, req{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Authorization")})
		switch {
		case strings.HasSuffix(r.URL.Path, "/resource-tree"):
			fmt.Fprint(w, `{"nodes":[]}`)
		case strings.HasSuffix(r.URL.Path, "/managed-resources"):
			fmt.Fprint(w, `{"items":[]}`)
		default:
			fmt.Fprint(w, `{"metadata":{"name":"a b"}}`)
		}
	}))
	defer srv.Close()
	tok := t.TempDir() + "/token"
	writeFile(tok, "\n tok-1 \n")
	c, err := New(Config{Server: srv.URL[len("http://"):], Plaintext: true, RootPath: "/argo-cd/", TokenFile: tok, AppNamespace: "apps", RequestTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	steps := []func() error{
		func() error { _, err := c.Get(ctx, "a b"); return err },
		func() error { _, err := c.Refresh(ctx, "a b"); return err },
		func() error { _, err := c.Create(ctx, []byte(`{"metadata":{"name":"a b"}}`)); return err },
		func() error { return c.TerminateOperation(ctx, "a b") },
		func() error { _, err := c.ResourceTree(ctx, "a b"); return err },
		func() error { _, err := c.ManagedResources(ctx, "a b"); return err },
		func() error { return c.Delete(ctx, "a b", true) },
		func() error {
			return c.DeleteResource(ctx, "a b", ResourceRef{Version: "v1", Kind: "PersistentVolumeClaim", Namespace: "db", Name: "data-0"})
		},
	}
	writeFile(tok, "tok-2")
	for i, s := range steps {
		if i == 3 {
			if err := c.ReloadToken(); err != nil {
				t.Fatal(err)
			}
		}
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	want := []req{
		{"GET", "/argo-cd/api/v1/applications/a%20b", "appNamespace=apps", "Bearer tok-1"},
		{"GET", "/argo-cd/api/v1/applications/a%20b", "appNamespace=apps&refresh=normal", "Bearer tok-1"},
		{"POST", "/argo-cd/api/v1/applications", "upsert=true", "Bearer tok-1"},
		{"DELETE", "/argo-cd/api/v1/applications/a%20b/operation", "appNamespace=apps", "Bearer tok-2"},
		{"GET", "/argo-cd/api/v1/applications/a%20b/resource-tree", "appNamespace=apps", "Bearer tok-2"},
		{"GET", "/argo-cd/api/v1/applications/a%20b/managed-resources", "appNamespace=apps", "Bearer tok-2"},
		{"DELETE", "/argo-cd/api/v1/applications/a%20b", "appNamespace=apps&cascade=true&propagationPolicy=foreground", "Bearer tok-2"},
		{"DELETE", "/argo-cd/api/v1/applications/a%20b/resource", "appNamespace=apps&group=&kind=PersistentVolumeClaim&namespace=db&resourceName=data-0&version=v1", "Bearer tok-2"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("requests\n got %v\nwant %v", got, want)
	}
	if c.Calls() != int64(len(want)) {
		t.Fatalf("calls %d", c.Calls())
	}
}

func TestConfigErrors(t *testing.T) {
	tok := t.TempDir() + "/token"
	writeFile(tok, "   \n")
	spaced := t.TempDir() + "/token"
	writeFile(spaced, "s3cr3t token\n") // no Authorization header carries it as written
	for _, cfg := range []Config{
		{Server: "x:443", TokenFile: spaced, RequestTimeout: time.Second},
		{Server: "", TokenFile: tok, RequestTimeout: time.Second},
		{Server: "https://x", TokenFile: tok, RequestTimeout: time.Second},
		{Server: "x:443", TokenFile: tok, RequestTimeout: time.Second},              // empty token
		{Server: "x:443", TokenFile: tok + "-missing", RequestTimeout: time.Second}, // no token
		{Server: "x:443", TokenFile: tok, CAFile: tok, RequestTimeout: time.Second}, // CA without PEM
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%+v: accepted", cfg)
		} else if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("error leaks the token: %v", err)
		}
	}
}

// Every request has its own deadline: a server that never answers costs one
// request timeout, and the error is transient.
func TestRequestDeadline(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	c := testClient(t, srv.URL, "")
	c.requestTimeout = 150 * time.Millisecond
	if _, err := c.Sync(context.Background(), "x", false, nil); !IsUnanswered(err) {
		t.Fatalf("a sync past its request timeout: %v is not unanswered", err)
	}
	for _, f := range []func() error{
		func() error { _, err := c.Get(context.Background(), "x"); return err },
		func() error { _, err := c.Watch(context.Background(), "x"); return err },
	} {
		start := time.Now()
		err := f()
		if el := time.Since(start); el > time.Second || !IsTransient(err) {
			t.Fatalf("after %s: %v", el, err)
		}
	}
}

// Once the headers are in, the stream is not bound by the request timeout.
func TestWatchOutlivesRequestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		fmt.Fprintln(w, `{"result":{"type":"MODIFIED","application":{"metadata":{"name":"x","resourceVersion":"2"}}}}`)
	}))
	defer srv.Close()
	c := testClient(t, srv.URL, "")
	c.requestTimeout = 100 * time.Millisecond
	st, err := c.Watch(t.Context(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ev, err := st.Next()
	if err != nil || ev.Application.Metadata.ResourceVersion != "2" {
		t.Fatalf("%v %v", ev, err)
	}
	if _, err := st.Next(); !IsTransient(err) || !errors.Is(err, io.EOF) {
		t.Fatalf("end of stream: %v", err)
	}
}

func TestConnectionRefusedIsTransient(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := testClient(t, "http://"+addr, "")
	_, err = c.Get(t.Context(), "x")
	if !IsTransient(err) || strings.Contains(err.Error(), "http://") {
		t.Fatalf("%v", err)
	}
}

// A 200 that is not Argo CD's JSON is a transport fault (retried), and an
// error body that quotes the credentials is masked, the token too.
func TestUndecodableAnswerAndEchoedCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			fmt.Fprint(w, "<html>502 Bad Gateway</html>")
			return
		}
		w.WriteHeader(503)
		fmt.Fprintf(w, "upstream error; %s; raw %s", r.Header.Get("Authorization"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer srv.Close()
	dir := t.TempDir()
	tok := dir + "/token"
	if err := writeFile(tok, "s3cr3t-token-value"); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Server: strings.TrimPrefix(srv.URL, "http://"), Plaintext: true, TokenFile: tok, RequestTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Create(context.Background(), []byte(`{}`))
	if !IsTransient(err) || !strings.Contains(err.Error(), "undecodable answer (HTTP 200") {
		t.Fatalf("create: %v", err)
	}
	_, err = c.Get(context.Background(), "x")
	if !IsTransient(err) || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "REDACTED") {
		t.Fatalf("get: %v", err)
	}
}
