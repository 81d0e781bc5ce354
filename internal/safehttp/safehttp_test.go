package safehttp

import (
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safehttp/safehttptest"
)

const token = "tok-0123456789abcdefghij0123456789abcdef" // 40 characters

// A redirect to another host:port is refused before any request reaches
// it, and the error names where it pointed without its credentials.
func TestRedirectRefused(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte(`{"status":{"health":{"status":"Healthy"}}}`))
	}))
	defer other.Close()
	for _, status := range []int{301, 302, 303, 307, 308} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u := strings.Replace(other.URL, "http://", "http://user:pw-secret@", 1) + "/api?token=qs-secret"
			http.Redirect(w, r, u, status)
		}))
		c, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/applications/x", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		_, _, err = c.Do(req, "answer", AnswerLimit)
		srv.Close()
		re, ok := err.(*RedirectError)
		if !ok {
			t.Fatalf("HTTP %d: err = %v, want a *RedirectError", status, err)
		}
		msg := re.Error()
		if re.Status != status || !strings.Contains(msg, strings.TrimPrefix(other.URL, "http://")+"/api?…") {
			t.Errorf("HTTP %d: %q does not name the target", status, msg)
		}
		for _, s := range []string{"pw-secret", "qs-secret", "user", token} {
			if strings.Contains(msg, s) {
				t.Errorf("HTTP %d: %q in %q", status, s, msg)
			}
		}
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("%d requests reached the other server", n)
	}
	// A probe may take the 3xx as its answer; it is still not followed.
	srv := httptest.NewServer(http.RedirectHandler(other.URL, http.StatusFound))
	defer srv.Close()
	c, _ := New(Config{ReturnRedirects: true})
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if a, _, err := c.Do(req, "probe", 1<<10); err != nil || a.StatusCode != http.StatusFound || reached.Load() != 0 {
		t.Fatalf("probe: %v, %v, reached %d", a, err, reached.Load())
	}
}

// A gzip bomb (a few KiB inflating past the bound) is refused at the
// bound, counted after decompression, and memory does not follow it.
func TestGzipBombBounded(t *testing.T) {
	bomb := safehttptest.GzipBomb("", 256, "")
	srv := safehttptest.GzipServer(t, bomb)
	c, _ := New(Config{})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	_, data, err := c.Do(req, "the answer", 1<<20)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if !readlimit.IsTooLarge(err) || data != nil {
		t.Fatalf("%d KiB compressed: err = %v, %d bytes kept", len(bomb)>>10, err, len(data))
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
		t.Fatalf("reading a bounded 1 MiB answer allocated %d MiB", grown>>20)
	}
	// A stream bounds each message: Reset starts the count over.
	req, _ = http.NewRequest(http.MethodGet, srv.URL, nil)
	a, err := c.Open(req, "the stream", 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Body.Close()
	buf := make([]byte, 1<<15)
	for range 10 {
		if _, err := a.Body.Read(buf); err != nil {
			t.Fatal(err)
		}
		a.Body.Reset()
	}
	if _, err := readlimit.ReadAll(a.Body, "rest", 1<<30); !readlimit.IsTooLarge(err) {
		t.Fatalf("past the bound: %v", err)
	}
}

// ErrorText redacts before it clips: a 401 echoing the token, wherever the
// cut falls, leaves no piece of it of 4 characters or more.
func TestErrorTextLeaksNoToken(t *testing.T) {
	for pad := range 50 {
		for _, body := range []string{
			strings.Repeat("x", MessageMax-30+pad) + " invalid token " + token,
			`{"error":"x","code":16,"message":"` + strings.Repeat("y", MessageMax-30+pad) + ` token ` + token + `"}`,
		} {
			got := ErrorText(http.StatusUnauthorized, []byte(body), token)
			if len(got) > MessageMax {
				t.Fatalf("%d bytes", len(got))
			}
			safehttptest.NoPieceOf(t, token, got)
		}
	}
	if got := ErrorText(http.StatusBadGateway, nil); got != "Bad Gateway" {
		t.Errorf("empty body: %q", got)
	}
	if got := ErrorText(http.StatusForbidden, []byte(`{"kind":"Status","message":"workflows is forbidden"}`)); got != "workflows is forbidden" {
		t.Errorf("Status: %q", got)
	}
}

// TLS as configured: a CA file that is no file of certificates is refused
// with its bound, never read to the end.
func TestCAFileBounded(t *testing.T) {
	if _, err := New(Config{TLS: TLS{CAFile: "/dev/zero"}}); err == nil || !strings.Contains(err.Error(), "/dev/zero") {
		t.Fatalf("CA /dev/zero: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(empty, []byte("not a certificate"), 0o600)
	if _, err := New(Config{TLS: TLS{CAFile: empty}}); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Fatalf("not PEM: %v", err)
	}
	// Only the configured CA: the test server's own certificate is not
	// trusted without it, and is with it.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c, _ := New(Config{})
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if _, _, err := c.Do(req, "x", 1); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted: %v", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pemOf(srv.Certificate().Raw), 0o600)
	c, err := New(Config{TLS: TLS{CAFile: ca}})
	if err != nil {
		t.Fatal(err)
	}
	if a, _, err := c.Do(req, "x", 1); err != nil || !a.OK() {
		t.Fatalf("trusted: %v", err)
	}
}

func pemOf(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// The answers read at once share the process's budget: past it a read
// fails (transiently), and what a closed or released body held is free.
func TestInFlightBudget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		zero := make([]byte, 1<<20)
		for range 100 {
			if _, err := w.Write(zero); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, _ := New(Config{})
	open := func() *Body {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		a, err := c.Open(req, "an answer", 100<<20)
		if err != nil {
			t.Fatal(err)
		}
		return a.Body
	}
	a, b := open(), open()
	defer a.Close()
	defer b.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(a, 40<<20)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, io.LimitReader(b, 40<<20))
	var ob *OverBudgetError
	if !errors.As(err, &ob) || !strings.Contains(err.Error(), "64 MiB budget") {
		t.Fatalf("past the budget: %v", err)
	}
	a.Release()
	b.Close()
	if n := inFlight.Load(); n != 0 { // every other test's bodies are closed too
		t.Fatalf("%d bytes still counted after release and close", n)
	}
	c2 := open()
	defer c2.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(c2, 40<<20)); err != nil {
		t.Fatalf("after release: %v", err)
	}
}
