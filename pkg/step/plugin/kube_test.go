package plugin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The in-cluster client: the API server's address from the environment,
// its CA and the token from the mounted ServiceAccount; TLS verified.
func TestInCluster(t *testing.T) {
	var gotAuth, gotPath string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath = r.Header.Get("Authorization"), r.URL.Path
		w.Write([]byte(`{"metadata":{"uid":"u"}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600)
	os.WriteFile(filepath.Join(dir, "token"), []byte("sa-token\n"), 0o600)
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	k, err := inClusterFrom(func(k string) string { return env[k] }, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.workflow(context.Background(), "ns", "wf"); err != nil {
		t.Fatal(err)
	}
	if gotAuth != "Bearer sa-token" || gotPath != "/apis/argoproj.io/v1alpha1/namespaces/ns/workflows/wf" {
		t.Errorf("auth %q path %q", gotAuth, gotPath)
	}
	// Another CA: the server is not trusted.
	os.WriteFile(filepath.Join(dir, "ca.crt"), otherCA(t), 0o600)
	k, _ = inClusterFrom(func(k string) string { return env[k] }, dir)
	if _, err := k.workflow(context.Background(), "ns", "wf"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted server: %v", err)
	}
	// Outside a pod, or without the mounted CA: said so.
	if _, err := inClusterFrom(func(string) string { return "" }, dir); err == nil || !strings.Contains(err.Error(), "not running in a pod") {
		t.Errorf("no env: %v", err)
	}
	if _, err := inClusterFrom(func(k string) string { return env[k] }, t.TempDir()); err == nil || !strings.Contains(err.Error(), "automountServiceAccountToken") {
		t.Errorf("no CA: %v", err)
	}
}

// otherCA is a self-signed certificate the test server's is not signed by.
func otherCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
