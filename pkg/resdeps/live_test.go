package resdeps

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const secretToken = "tok-0123456789abcdef"

func liveServer(t *testing.T) *httptest.Server {
	t.Helper()
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"certificates.cert-manager.io"},"spec":{"group":"cert-manager.io","scope":"Namespaced","names":{"kind":"Certificate","plural":"certificates"}}}`
	cert := `{"apiVersion":"cert-manager.io/v1","kind":"Certificate","metadata":{"name":"web","namespace":"web"},"spec":{"issuerRef":{"name":"ca"}}}`
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer "+secretToken {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		items := []map[string]any{}
		switch r.URL.Path + "?" + r.URL.RawQuery {
		case "/api/v1/applications/cert-manager/managed-resources?appNamespace=argocd":
			items = append(items,
				map[string]any{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition", "name": "certificates.cert-manager.io", "targetState": crd, "liveState": crd},
				map[string]any{"kind": "ConfigMap", "namespace": "cert-manager", "name": "old", "liveState": `{"kind":"ConfigMap"}`, "targetState": "null"})
		case "/api/v1/applications/web/managed-resources?appNamespace=team":
			items = append(items, map[string]any{"group": "cert-manager.io", "kind": "Certificate", "namespace": "web", "name": "web", "targetState": cert, "liveState": "null"})
		case "/api/v1/applications/broken/managed-resources?appNamespace=argocd":
			items = append(items, map[string]any{"kind": "Secret", "name": "s", "targetState": "[1,2]"})
		default:
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": 7, "message": "permission denied (token " + secretToken + ")"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"items": items})
	}))
}

func liveClient(t *testing.T, srv *httptest.Server) *Live { return liveClientWith(t, srv, secretToken) }

func liveClientWith(t *testing.T, srv *httptest.Server, token string) *Live {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := NewLive(LiveConfig{Server: strings.TrimPrefix(srv.URL, "http://"), Plaintext: true, TokenFile: tok, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLive(t *testing.T) {
	srv := liveServer(t)
	defer srv.Close()
	l := liveClient(t, srv)
	ctx := context.Background()
	cm, err := l.Objects(ctx, "argocd", "cert-manager")
	if err != nil {
		t.Fatal(err)
	}
	web, err := l.Objects(ctx, "team", "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(cm) != 1 || len(web) != 1 {
		t.Fatalf("objects: %d, %d (a resource only live is not deployed)", len(cm), len(web))
	}
	r := Infer([]App{{Name: "cert-manager", Objects: cm}, {Name: "web", Objects: web}})
	if got := flat(r); len(got) != 1 || got[0] != "web → cert-manager: CRD certificates.cert-manager.io×1" {
		t.Errorf("edges %v", got)
	}
	if w := r.Edges[0].Evidence[0].Where; w != "Application team/web (live)" {
		t.Errorf("where %q", w)
	}

	_, err = l.Objects(ctx, "argocd", "denied")
	if err == nil || !strings.Contains(err.Error(), "managed resources of Application argocd/denied: HTTP 403: permission denied") {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), secretToken) {
		t.Errorf("the token is in the error: %v", err)
	}
	if _, err := l.Objects(ctx, "argocd", "broken"); err == nil || !strings.Contains(err.Error(), "items[0] (Secret /s): targetState is not a JSON object") {
		t.Errorf("err = %v", err)
	}
}

func TestNewLiveErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewLive(LiveConfig{Server: "https://argocd:443", TokenFile: empty, CAFile: empty})
	for _, want := range []string{"without a scheme", "request timeout", "holds no PEM certificate", "is empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	if _, err := NewLive(LiveConfig{Server: "argocd:443", RequestTimeout: time.Second}); err == nil || !strings.Contains(err.Error(), "token file is required") {
		t.Errorf("err = %v", err)
	}
}
