package deps

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/redact"
)

// LiveConfig says how to reach the Argo CD API server: the connection
// settings deploystep takes (pkg/step: --server, --plaintext,
// --insecure-skip-verify, --ca-file, --root-path, --token-file).
type LiveConfig struct {
	Server             string // host:port
	Plaintext          bool
	InsecureSkipVerify bool
	CAFile             string
	RootPath           string
	TokenFile          string
	RequestTimeout     time.Duration
}

// Live reads what Applications deploy from the Argo CD API, read-only: GET
// /api/v1/applications/{name}/managed-resources, each item's targetState
// (what the app's source renders; a resource only live, which the next
// sync prunes, is not what the app deploys). Its own small
// client rather than pkg/step/argocd's: that one reads answers whole, and
// one Application's managed resources (CRDs with their schemas, two states
// each) are bounded here by readlimit.Import.
type Live struct {
	base    string
	hc      *http.Client
	token   string
	timeout time.Duration
}

// NewLive checks the configuration and reads the token and CA files.
func NewLive(cfg LiveConfig) (*Live, error) {
	var problems []error
	switch {
	case cfg.Server == "":
		problems = append(problems, errors.New("the Argo CD server is required (host:port)"))
	case strings.Contains(cfg.Server, "://"):
		problems = append(problems, fmt.Errorf("server %q: give host:port without a scheme (plaintext HTTP is a separate option)", cfg.Server))
	}
	if cfg.RequestTimeout <= 0 {
		problems = append(problems, errors.New("the request timeout must be positive"))
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // opt-in
	if cfg.CAFile != "" {
		pem, err := readlimit.ReadFile(cfg.CAFile, readlimit.Secret)
		pool, perr := x509.SystemCertPool()
		if perr != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		switch {
		case err != nil:
			problems = append(problems, fmt.Errorf("CA file: %w", err))
		case !pool.AppendCertsFromPEM(pem):
			problems = append(problems, fmt.Errorf("CA file %s holds no PEM certificate", cfg.CAFile))
		}
		tlsCfg.RootCAs = pool
	}
	var token string
	if cfg.TokenFile == "" {
		problems = append(problems, errors.New("the Argo CD token file is required"))
	} else if b, err := readlimit.ReadFile(cfg.TokenFile, readlimit.Secret); err != nil {
		problems = append(problems, fmt.Errorf("reading the Argo CD token: %w", err))
	} else if token = strings.TrimSpace(string(b)); token == "" {
		problems = append(problems, fmt.Errorf("the Argo CD token file %s is empty", cfg.TokenFile))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	scheme := "https"
	if cfg.Plaintext {
		scheme = "http"
	}
	base := scheme + "://" + cfg.Server
	if root := strings.Trim(cfg.RootPath, "/"); root != "" {
		base += "/" + root
	}
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsCfg, TLSHandshakeTimeout: 10 * time.Second}
	return &Live{base: base, hc: &http.Client{Transport: tr}, token: token, timeout: cfg.RequestTimeout}, nil
}

// managedResource is one item of Argo CD's ManagedResourcesResponse
// (v1alpha1.ResourceDiff): the states are JSON documents in strings.
type managedResource struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	TargetState string `json:"targetState"`
	LiveState   string `json:"liveState"`
}

// Objects are the objects Application namespace/name deploys. A resource
// only live (to be pruned) is not among them.
func (l *Live) Objects(ctx context.Context, namespace, name string) ([]Object, error) {
	app := name
	if namespace != "" {
		app = namespace + "/" + name
	}
	op := "managed resources of Application " + app
	q := url.Values{}
	if namespace != "" {
		q.Set("appNamespace", namespace)
	}
	u := l.base + "/api/v1/applications/" + url.PathEscape(name) + "/managed-resources"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Accept", "application/json")
	resp, err := l.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is ours; the cause is what matters
		}
		return nil, fmt.Errorf("%s: %s", op, redact.String(err.Error(), l.token))
	}
	defer resp.Body.Close()
	data, err := readlimit.ReadAll(resp.Body, op, readlimit.Import)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var gw struct {
			Message string `json:"message"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &gw) == nil && gw.Message != "" {
			msg = gw.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, fmt.Errorf("%s: HTTP %d: %s", op, resp.StatusCode, redact.String(msg, l.token))
	}
	var body struct {
		Items []managedResource `json:"items"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("%s: not Argo CD's answer (%d bytes): %v", op, len(data), err)
	}
	var out []Object
	var problems []error
	for i, it := range body.Items {
		state := it.TargetState
		if state == "" || state == "null" {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(state), &obj); err != nil || obj == nil {
			problems = append(problems, fmt.Errorf("%s: items[%d] (%s %s/%s): targetState is not a JSON object", op, i, it.Kind, it.Namespace, it.Name))
			continue
		}
		out = append(out, Object{Obj: obj, File: "Application " + app + " (live)"})
	}
	return out, errors.Join(problems...)
}

// AppRef names an Application to read and the app it is for.
type AppRef struct {
	App         string // the inventory's name for it (the spec app)
	Namespace   string // the Application's namespace
	Application string // its name
}

// liveReaders bounds the reads in flight: enough to hide the round trips
// of a thousand Applications, few enough not to load the API server.
const liveReaders = 8

// Inventory reads every Application of refs, eight at a time; every
// failure is reported, together. The apps come in refs' order.
func (l *Live) Inventory(ctx context.Context, refs []AppRef) ([]App, error) {
	out := make([]App, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, liveReaders)
	var wg sync.WaitGroup
	for i, r := range refs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			objs, err := l.Objects(ctx, r.Namespace, r.Application)
			out[i], errs[i] = App{Name: r.App, Objects: objs}, err
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
