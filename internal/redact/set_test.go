package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// Holes found while hardening the executor: a password holding an @, an
// echoed kubeconfig, a private key, and plain sentences that must stay.
func TestStringHoles(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://bob:p@ss@github.com/x.git", "https://REDACTED@github.com/x.git"},
		{"users:\n- name: ci\n  user:\n    token: eyJhbGciOiJSUzI1NiJ9.x\n", "users:\n- name: ci\n  user:\n    token: REDACTED\n"},
		{"    client-key-data: LS0tLS1CRUdJTg==", "    client-key-data: REDACTED"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----REDACTED-----END RSA PRIVATE KEY-----"},
		{`{"access_token": "ya29.a0AfH6"}`, `{"access_token": "REDACTED"}`},
		{"GET /x?api_key=abcd1234&y=1", "GET /x?api_key=REDACTED&y=1"},
		// Our own messages: a check named argocd-token, a field named tokenSecret.
		{"argocd-token: Secret argo/argocd-token does not exist", "argocd-token: Secret argo/argocd-token does not exist"},
		{`{"tokenSecret": {"name": "argocd-token"}}`, `{"tokenSecret": {"name": "argocd-token"}}`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

const secret = "kubeconfig-bearer-0123456789"

func TestSetMasksRegisteredValuesAndTheirBase64(t *testing.T) {
	var s Set
	s.Add(secret+"\n", "ab") // too short to register
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	got := s.String("echo " + secret + " data: " + b64 + " ab")
	if strings.Contains(got, secret) || strings.Contains(got, b64) || !strings.HasSuffix(got, " ab") {
		t.Fatal(got)
	}
	var nilSet *Set
	if got := nilSet.String("https://u:p@h/"); got != "https://REDACTED@h/" {
		t.Fatal(got)
	}
}

func TestSetError(t *testing.T) {
	var s Set
	s.Add(secret)
	base := io.ErrUnexpectedEOF
	err := s.Error(fmt.Errorf("server said %s: %w", secret, base))
	if strings.Contains(err.Error(), secret) || !errors.Is(err, base) {
		t.Fatalf("%v (is: %v)", err, errors.Is(err, base))
	}
	if s.Error(nil) != nil {
		t.Fatal("nil must stay nil")
	}
}

func TestSetWriter(t *testing.T) {
	var s Set
	s.Add(secret)
	var b bytes.Buffer
	w := s.Writer(&b)
	n, err := fmt.Fprintf(w, "token %s\n", secret)
	if err != nil || n != len("token "+secret+"\n") {
		t.Fatalf("n %d err %v", n, err)
	}
	if b.String() != "token REDACTED\n" {
		t.Fatal(b.String())
	}
}

type inner struct {
	Text   string
	Raw    json.RawMessage
	hidden string
}

type outer struct {
	Name   string
	List   []string
	Ptr    *inner
	Map    map[string]string
	Counts map[string]int
	Any    any
	Arr    [1]string
	Self   *outer
}

func TestSetWalk(t *testing.T) {
	var s Set
	s.Add(secret)
	v := &outer{
		Name:   "https://u:" + secret + "@git/x",
		List:   []string{"a " + secret},
		Ptr:    &inner{Text: "Bearer abcdefgh", Raw: json.RawMessage(`{"m":"` + secret + `"}`), hidden: secret},
		Map:    map[string]string{secret: "v " + secret},
		Counts: map[string]int{"ok": 1},
		Any:    "any " + secret,
		Arr:    [1]string{secret},
	}
	v.Self = v // cycles end
	s.Walk(v)
	out, err := json.Marshal(v.Ptr)
	if err != nil {
		t.Fatal(err)
	}
	all := fmt.Sprintf("%s %v %s %v %v %v %s", v.Name, v.List, out, v.Map, v.Any, v.Arr, v.Ptr.Text)
	if strings.Contains(all, secret) || strings.Contains(all, "abcdefgh") {
		t.Fatal(all)
	}
	if v.Ptr.hidden != secret || v.Counts["ok"] != 1 {
		t.Fatal("unexported fields and non-strings are left alone")
	}
}

func TestSetHandler(t *testing.T) {
	var s Set
	s.Add(secret)
	for _, format := range []string{"text", "json"} {
		var b bytes.Buffer
		var h slog.Handler = slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})
		if format == "json" {
			h = slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})
		}
		lg := slog.New(s.Handler(h)).With("url", "https://x:"+secret+"@h/").WithGroup("g")
		lg.Debug("got "+secret, "error", errors.New("echo "+secret), "n", 3,
			slog.Group("inner", "body", `{"token":"abcdefgh"}`), "list", []string{secret})
		if strings.Contains(b.String(), secret) || strings.Contains(b.String(), "abcdefgh") || !strings.Contains(b.String(), "3") {
			t.Errorf("%s: %s", format, b.String())
		}
	}
}
