// Command e2eapp is the workload of the e2e test platform: an HTTP server
// whose /ready answers 503 until READY_AFTER has passed since start, then 200.
// A readiness probe on /ready makes a Deployment become Ready after a chosen
// delay. NEVER_READY=true keeps /ready at 503 (a broken app). /healthz is 200.
//
// `e2eapp probe URL` is the harness's in-cluster client instead: one GET with
// an optional CA file and bearer token file (PROBE_CA_FILE, PROBE_TOKEN_FILE),
// exit 0 when the status is 200 and the body contains PROBE_EXPECT.
//
// `e2eapp controller FLAGS` is the stand-in operator of the 41-app platform
// (controller.go).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "controller" {
		if err := controller(os.Args[2:]); err != nil {
			log.Fatalf("controller: %v", err)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "probe" {
		if err := probe(os.Args[2]); err != nil {
			log.Fatalf("probe %s: %v", os.Args[2], err)
		}
		return
	}
	delay := time.Duration(0)
	if v := os.Getenv("READY_AFTER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			log.Fatalf("READY_AFTER: %v", err)
		}
		delay = d
	}
	never := os.Getenv("NEVER_READY") == "true"
	addr := ":" + envOr("PORT", "8080")
	start := time.Now()
	readyAt := start.Add(delay)

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) {
		if never || time.Now().Before(readyAt) {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%s up since %s\n", envOr("APP_NAME", "e2eapp"), start.UTC().Format(time.RFC3339Nano))
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("listening on %s, ready after %s (never=%v)", addr, delay, never)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func probe(url string) error {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if f := os.Getenv("PROBE_CA_FILE"); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("no certificate in %s", f)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if f := os.Getenv("PROBE_TOKEN_FILE"); f != "" {
		tok, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
	}
	if want := os.Getenv("PROBE_EXPECT"); want != "" && !strings.Contains(string(body), want) {
		return fmt.Errorf("body lacks %q: %.300s", want, body)
	}
	fmt.Printf("probe %s: 200, %d bytes\n", url, len(body))
	return nil
}
