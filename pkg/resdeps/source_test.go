package resdeps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The one reading of --manifests and --live that plan and import share:
// what each gives, and the same words for the same mistakes.
func TestSourceConfigOpen(t *testing.T) {
	if src, err := (SourceConfig{}).Open(); src != nil || err != nil {
		t.Fatalf("no inventory: %v, %v", src, err)
	}
	_, err := SourceConfig{Manifests: "testdata/charts", Live: true}.Open()
	if err == nil || err.Error() != "--manifests and --live are two sources of the same inventory: give one" {
		t.Errorf("both: %v", err)
	}
	absent := filepath.Join(t.TempDir(), "absent")
	_, err = SourceConfig{Manifests: absent}.Open()
	if err == nil || !strings.HasPrefix(err.Error(), "--manifests "+absent+":\n") {
		t.Errorf("absent folder: %v", err)
	}
	_, err = SourceConfig{Manifests: absent, Live: true}.Open()
	if err == nil || !strings.Contains(err.Error(), "give one") || !strings.Contains(err.Error(), "--manifests "+absent+":\n") {
		t.Errorf("both, the folder absent: %v", err)
	}
	_, err = SourceConfig{Live: true, Conn: LiveConfig{Server: "argocd:443", RequestTimeout: time.Second}}.Open()
	if err == nil || !strings.HasPrefix(err.Error(), "--live:\n") || !strings.Contains(err.Error(), "token file is required") {
		t.Errorf("live without a token: %v", err)
	}

	src, err := SourceConfig{Manifests: "testdata/charts"}.Open()
	if err != nil {
		t.Fatal(err)
	}
	apps, err := src.Inventory(t.Context(), nil)
	if src.Name != "--manifests testdata/charts" || err != nil || len(apps) == 0 || len(apps) != len(src.Apps) {
		t.Errorf("folder: %q, %d apps, %v", src.Name, len(apps), err)
	}
}

// A failed read from the API is a FetchError naming the source (exit 1);
// a good one gives each Application's target state.
func TestSourceLive(t *testing.T) {
	srv := liveServer(t)
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(secretToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	server := strings.TrimPrefix(srv.URL, "http://")
	src, err := SourceConfig{Live: true, Conn: LiveConfig{Server: server, Plaintext: true, TokenFile: tok, RequestTimeout: 10 * time.Second}}.Open()
	if err != nil {
		t.Fatal(err)
	}
	if src.Name != "--live ("+server+")" {
		t.Errorf("name %q", src.Name)
	}
	apps, err := src.Inventory(t.Context(), []AppRef{{App: "cert-manager", Namespace: "argocd", Application: "cert-manager"}})
	if err != nil || len(apps) != 1 || len(apps[0].Objects) != 1 {
		t.Fatalf("%+v, %v", apps, err)
	}
	_, err = src.Inventory(t.Context(), []AppRef{{App: "x", Namespace: "argocd", Application: "x"}})
	var fe *FetchError
	if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), src.Name+":\n") {
		t.Errorf("failed read: %v", err)
	}
}
