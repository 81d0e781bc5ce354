package main

// `e2eapp controller` is the stand-in of an operator, or of a workload that
// needs other objects, in the e2e's 41-app reference platform (issue 24). It
// talks to the Kubernetes API with its pod's service account (standard
// library only) and has the behaviour its flags give it:
//
//	-kinds G/V/PLURAL,...   custom resources it reconciles: once the controller
//	                        is ready it sets condition Ready=True on each
//	-gate PLURAL=G/V/P/NS/N a kind of -kinds is marked Ready only once that
//	                        object is Ready (a CephBlockPool waits for its
//	                        CephCluster)
//	-ready-after DURATION   start-up time before it is ready (NEVER_READY=true:
//	                        never)
//	-needs G/V/P/NS/N,...   objects that must be Ready before it is ready (a
//	                        server waiting for its database)
//	-needs-url URL,...      URLs that must answer 200 before it is ready
//	-webhook DIR            serve a validating admission webhook on :8443 with
//	                        DIR/tls.crt and DIR/tls.key once ready; it admits
//	                        everything (the point is that nothing is admitted
//	                        while it is not serving: failurePolicy Fail)
//	-provision NAME=DIR      once ready, a dynamic provisioner named NAME: for
//	                        every claim the PV controller hands to NAME (its
//	                        StorageClass exists and names it) it makes a
//	                        hostPath volume under DIR bound to that claim, with
//	                        the class's reclaim policy and the -labels given
//	-labels K=V,...          labels of the volumes it makes
//
// /ready answers 200 once ready (the pod's readiness probe), /healthz always.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

type ref struct{ group, version, plural, ns, name string }

func (r ref) collection() string {
	p := "/apis/" + r.group + "/" + r.version
	if r.group == "" {
		p = "/api/" + r.version
	}
	if r.ns != "" {
		p += "/namespaces/" + r.ns
	}
	return p + "/" + r.plural
}

func (r ref) path() string { return r.collection() + "/" + r.name }

func (r ref) String() string { return r.plural + " " + r.ns + "/" + r.name }

// parseRef reads G/V/PLURAL[/NS/NAME]; NS may be empty (cluster-scoped).
func parseRef(s string, object bool) (ref, error) {
	f := strings.Split(s, "/")
	if (!object && len(f) != 3) || (object && len(f) != 5) {
		return ref{}, fmt.Errorf("%q: want group/version/plural%s", s, map[bool]string{true: "/namespace/name"}[object])
	}
	r := ref{group: f[0], version: f[1], plural: f[2]}
	if object {
		r.ns, r.name = f[3], f[4]
	}
	return r, nil
}

type kube struct {
	base, token string
	c           *http.Client
}

func newKube() (*kube, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" {
		return nil, errors.New("not in a pod (no KUBERNETES_SERVICE_HOST)")
	}
	tok, err := os.ReadFile(saDir + "/token")
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(saDir + "/ca.crt")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("no CA in " + saDir + "/ca.crt")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &kube{base: "https://" + host + ":" + port, token: strings.TrimSpace(string(tok)), c: &http.Client{Transport: tr, Timeout: 10 * time.Second}}, nil
}

func (k *kube) do(method, path, ctype string, body []byte, out any) (int, error) {
	req, err := http.NewRequest(method, k.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+k.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := k.c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %.200s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(b, out)
	}
	return resp.StatusCode, nil
}

type object struct {
	Metadata struct{ Name, Namespace string }
	Status   struct {
		Conditions []struct{ Type, Status string }
	}
}

func (o object) ready() bool {
	for _, c := range o.Status.Conditions {
		if c.Type == "Ready" && c.Status == "True" {
			return true
		}
	}
	return false
}

// isReady: the object exists and has Ready=True.
func (k *kube) isReady(r ref) bool {
	var o object
	if _, err := k.do(http.MethodGet, r.path(), "", nil, &o); err != nil {
		return false
	}
	return o.ready()
}

func urlOK(u string) bool {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func controller(args []string) error {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	kindsF := fs.String("kinds", "", "custom resources to mark Ready: group/version/plural,...")
	gateF := fs.String("gate", "", "plural=group/version/plural/namespace/name,...: mark that kind Ready only once the object is")
	after := fs.Duration("ready-after", 0, "start-up time before the controller is ready")
	needsF := fs.String("needs", "", "group/version/plural/namespace/name,...: objects Ready before this is ready")
	needsURL := fs.String("needs-url", "", "URL,...: answering 200 before this is ready")
	webhook := fs.String("webhook", "", "directory with tls.crt and tls.key: serve an admitting webhook on :8443 once ready")
	provisionF := fs.String("provision", "", "NAME=DIR: once ready, provision hostPath volumes under DIR for claims whose class names provisioner NAME")
	labelsF := fs.String("labels", "", "K=V,...: labels of the volumes -provision makes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var kinds, needs []ref
	gates := map[string]ref{}
	var errs []string
	for _, s := range splitList(*kindsF) {
		r, err := parseRef(s, false)
		if err != nil {
			errs = append(errs, "-kinds "+err.Error())
		}
		kinds = append(kinds, r)
	}
	for _, s := range splitList(*gateF) {
		p, o, ok := strings.Cut(s, "=")
		r, err := parseRef(o, true)
		if !ok || err != nil {
			errs = append(errs, fmt.Sprintf("-gate %q: want plural=group/version/plural/namespace/name", s))
		}
		gates[p] = r
	}
	for _, s := range splitList(*needsF) {
		r, err := parseRef(s, true)
		if err != nil {
			errs = append(errs, "-needs "+err.Error())
		}
		needs = append(needs, r)
	}
	var prov *provisioner
	if *provisionF != "" {
		name, dir, ok := strings.Cut(*provisionF, "=")
		if !ok || name == "" || !strings.HasPrefix(dir, "/") {
			errs = append(errs, fmt.Sprintf("-provision %q: want NAME=/absolute/dir", *provisionF))
		}
		prov = &provisioner{name: name, dir: dir, labels: map[string]string{}}
		for _, kv := range splitList(*labelsF) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				errs = append(errs, fmt.Sprintf("-labels %q: want K=V", kv))
			}
			prov.labels[k] = v
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	never := os.Getenv("NEVER_READY") == "true"
	var k *kube
	if len(kinds) > 0 || len(needs) > 0 || prov != nil {
		var err error
		if k, err = newKube(); err != nil {
			return err
		}
	}
	start := time.Now()
	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%s up since %s\n", envOr("APP_NAME", "e2eapp"), start.UTC().Format(time.RFC3339Nano))
	})
	srv := &http.Server{Addr: ":" + envOr("PORT", "8080"), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()
	log.Printf("controller: kinds %v, gates %v, ready after %s, needs %v %v, webhook %q, provision %q, never %v", kinds, gates, *after, needs, splitList(*needsURL), *webhook, *provisionF, never)
	webhookUp := false
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		case <-tick.C:
		}
		if !ready.Load() {
			ok := !never && time.Since(start) >= *after
			for _, n := range needs {
				if ok && !k.isReady(n) {
					ok = false
					log.Printf("waiting for %s", n)
				}
			}
			for _, u := range splitList(*needsURL) {
				if ok && !urlOK(u) {
					ok = false
					log.Printf("waiting for %s", u)
				}
			}
			if !ok {
				continue
			}
			if *webhook != "" && !webhookUp {
				if err := serveWebhook(*webhook); err != nil {
					log.Printf("webhook: %v", err)
					continue
				}
				webhookUp = true
			}
			ready.Store(true)
			log.Printf("ready after %s", time.Since(start).Round(time.Millisecond))
		}
		for _, kd := range kinds {
			reconcile(k, kd, gates)
		}
		if prov != nil {
			prov.provision(k)
		}
	}
}

// reconcile sets Ready=True on every object of kind kd that lacks it (and
// whose gate, if any, is Ready).
func reconcile(k *kube, kd ref, gates map[string]ref) {
	var l struct{ Items []object }
	if _, err := k.do(http.MethodGet, kd.collection(), "", nil, &l); err != nil {
		log.Printf("list %s: %v", kd.plural, err)
		return
	}
	for _, o := range l.Items {
		if o.ready() {
			continue
		}
		if g, ok := gates[kd.plural]; ok && !k.isReady(g) {
			log.Printf("%s %s/%s waits for %s", kd.plural, o.Metadata.Namespace, o.Metadata.Name, g)
			continue
		}
		r := kd
		r.ns, r.name = o.Metadata.Namespace, o.Metadata.Name
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []map[string]string{{
			"type": "Ready", "status": "True", "reason": "StandIn", "message": "the stand-in controller reconciled it",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}}}})
		if _, err := k.do(http.MethodPatch, r.path()+"/status", "application/merge-patch+json", patch, nil); err != nil {
			log.Printf("mark %s Ready: %v", r, err)
			continue
		}
		log.Printf("marked %s Ready", r)
	}
}

// serveWebhook serves an admitting validating webhook over TLS on :8443.
func serveWebhook(dir string) error {
	cert, err := tls.LoadX509KeyPair(dir+"/tls.crt", dir+"/tls.key")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/validate", func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Request    struct {
				UID  string `json:"uid"`
				Kind struct{ Kind string }
				Name string
			} `json:"request"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		log.Printf("admitted %s %s", review.Request.Kind.Kind, review.Request.Name)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review.APIVersion, "kind": review.Kind,
			"response": map[string]any{"uid": review.Request.UID, "allowed": true}})
	})
	srv := &http.Server{Addr: ":8443", Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	go func() {
		if err := srv.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()
	return nil
}
