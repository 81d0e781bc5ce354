// Package argocd is a small client for the Argo CD API server's REST
// (grpc-gateway JSON) API: the endpoints the Argo CD UI uses. It links only the
// standard library, so the in-step binary stays a few megabytes instead of the
// ~80 MB that argo-cd's own types and apiclient pull in.
package argocd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deployctl/deployctl/internal/redact"
)

// Config says how to reach the API server.
type Config struct {
	Server             string // host:port
	Plaintext          bool   // http:// (argocd-server --insecure)
	InsecureSkipVerify bool
	CAFile             string // PEM bundle added to the system roots
	RootPath           string // argocd-server --rootpath
	TokenFile          string
	AppNamespace       string        // namespace of the Application objects; "" = server default
	RequestTimeout     time.Duration // deadline of every single request
}

// Client talks to one Argo CD API server. It is safe for concurrent use.
type Client struct {
	base           string // scheme://host[:port][/rootpath]
	hc             *http.Client
	tokenFile      string
	requestTimeout time.Duration
	appNamespace   string

	mu    sync.Mutex
	token string

	calls atomic.Int64
}

// New checks the configuration, reads the token and builds the client.
func New(cfg Config) (*Client, error) {
	if cfg.Server == "" {
		return nil, errors.New("the Argo CD server address is required")
	}
	if strings.Contains(cfg.Server, "://") {
		return nil, fmt.Errorf("server %q: give host:port without a scheme (use --plaintext for HTTP)", cfg.Server)
	}
	if cfg.RequestTimeout <= 0 {
		return nil, errors.New("the request timeout must be positive")
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // opt-in flag
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", cfg.CAFile)
		}
		tlsCfg.RootCAs = pool
	}
	scheme := "https"
	if cfg.Plaintext {
		scheme = "http"
	}
	base := scheme + "://" + cfg.Server
	if root := strings.Trim(cfg.RootPath, "/"); root != "" {
		base += "/" + root
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	c := &Client{
		base:           base,
		hc:             &http.Client{Transport: transport},
		tokenFile:      cfg.TokenFile,
		requestTimeout: cfg.RequestTimeout,
		appNamespace:   cfg.AppNamespace,
	}
	if err := c.ReloadToken(); err != nil {
		return nil, err
	}
	return c, nil
}

// ReloadToken re-reads the token file: a mounted Secret may be replaced while
// the step runs (a token not yet valid is one of the retried faults).
func (c *Client) ReloadToken() error {
	b, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return fmt.Errorf("reading the Argo CD token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return fmt.Errorf("the Argo CD token file %s is empty", c.tokenFile)
	}
	c.mu.Lock()
	c.token = tok
	c.mu.Unlock()
	return nil
}

// Calls is the number of HTTP requests sent so far (for the result file).
func (c *Client) Calls() int64 { return c.calls.Load() }

// AppNamespace is the configured namespace of the Application objects.
func (c *Client) AppNamespace() string { return c.appNamespace }

// Get returns the application. An absent application is an error for which
// IsNotFound is true.
func (c *Client) Get(ctx context.Context, name string) (*Application, error) {
	return c.get(ctx, name, "")
}

// Refresh asks the controller to reconcile the application and returns it as
// that reconciliation left it. Argo CD sets the refresh annotation and answers
// only once a status update without the annotation arrives; the controller
// removes the annotation only in a reconciliation that started after it was
// set. So the answer reflects a reconciliation that began after this call.
func (c *Client) Refresh(ctx context.Context, name string) (*Application, error) {
	return c.get(ctx, name, "normal")
}

// HardRefresh is Refresh that also makes the repo-server regenerate the
// manifests and the controller re-assess every resource from scratch (a
// re-created CRD, for one, is otherwise judged from what it cached).
func (c *Client) HardRefresh(ctx context.Context, name string) (*Application, error) {
	return c.get(ctx, name, "hard")
}

func (c *Client) get(ctx context.Context, name string, refresh string) (*Application, error) {
	q := c.appQuery()
	if refresh != "" {
		q.Set("refresh", refresh)
	}
	var app Application
	err := c.do(ctx, "get application "+name, http.MethodGet, "/api/v1/applications/"+url.PathEscape(name), q, nil, &app)
	if err != nil && isForbidden(err) {
		// Without a project in the request Argo CD answers 403, not 404, for
		// an application that does not exist, so as not to leak its
		// existence. The list endpoint silently omits what the caller may
		// not see: absent from the list means absent for us.
		if visible, lerr := c.listed(ctx, name); lerr == nil && !visible {
			return nil, &APIError{Op: "get application " + name, Status: http.StatusNotFound, Code: codeNotFound,
				Message: fmt.Sprintf("application %q not found", name)}
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return &app, nil
}

func isForbidden(err error) bool {
	var e *APIError
	return errors.As(err, &e) && (e.Status == http.StatusForbidden || e.Code == codePermissionDenied)
}

// listed reports whether the application shows up in a list filtered by name.
func (c *Client) listed(ctx context.Context, name string) (bool, error) {
	q := c.appQuery()
	q.Set("name", name)
	var list struct {
		Items []Application `json:"items"`
	}
	if err := c.do(ctx, "list applications", http.MethodGet, "/api/v1/applications", q, nil, &list); err != nil {
		return false, err
	}
	for _, a := range list.Items {
		if a.Metadata.Name == name {
			return true, nil
		}
	}
	return false, nil
}

// Create creates the application from its JSON manifest (sent as is, so no
// field this client does not model is lost). upsert makes a repeated or
// racing create harmless.
func (c *Client) Create(ctx context.Context, manifest []byte) (*Application, error) {
	q := url.Values{"upsert": {"true"}}
	var app Application
	if err := c.do(ctx, "create application", http.MethodPost, "/api/v1/applications", q, json.RawMessage(manifest), &app); err != nil {
		return nil, err
	}
	return &app, nil
}

// SyncRequest is the body of POST /api/v1/applications/{name}/sync
// (ApplicationSyncRequest).
type SyncRequest struct {
	Name         string `json:"name"`
	AppNamespace string `json:"appNamespace,omitempty"`
	Prune        bool   `json:"prune,omitempty"`
	Infos        []Info `json:"infos,omitempty"`
}

// Sync starts a sync operation and returns the application with the
// operation set.
func (c *Client) Sync(ctx context.Context, name string, prune bool, infos []Info) (*Application, error) {
	body := SyncRequest{Name: name, AppNamespace: c.appNamespace, Prune: prune, Infos: infos}
	var app Application
	if err := c.do(ctx, "sync application "+name, http.MethodPost, "/api/v1/applications/"+url.PathEscape(name)+"/sync", nil, body, &app); err != nil {
		return nil, err
	}
	return &app, nil
}

// TerminateOperation asks the controller to stop the running operation.
func (c *Client) TerminateOperation(ctx context.Context, name string) error {
	return c.do(ctx, "terminate operation of "+name, http.MethodDelete, "/api/v1/applications/"+url.PathEscape(name)+"/operation", c.appQuery(), nil, nil)
}

// ResourceTree returns the live resource tree of the application.
func (c *Client) ResourceTree(ctx context.Context, name string) (*ApplicationTree, error) {
	var tree ApplicationTree
	if err := c.do(ctx, "resource tree of "+name, http.MethodGet, "/api/v1/applications/"+url.PathEscape(name)+"/resource-tree", c.appQuery(), nil, &tree); err != nil {
		return nil, err
	}
	return &tree, nil
}

// ManagedResources returns the resources the application manages directly,
// each with its live state.
func (c *Client) ManagedResources(ctx context.Context, name string) ([]ResourceDiff, error) {
	var resp struct {
		Items []ResourceDiff `json:"items"`
	}
	if err := c.do(ctx, "managed resources of "+name, http.MethodGet, "/api/v1/applications/"+url.PathEscape(name)+"/managed-resources", c.appQuery(), nil, &resp); err != nil {
		return nil, err
	}
	return resp.Items, nil
}

// Delete deletes the application. With cascade, deletion is foreground: Argo
// CD deletes the managed resources and removes the Application only once
// they are gone. Without, the resources are orphaned (left in place).
func (c *Client) Delete(ctx context.Context, name string, cascade bool) error {
	q := c.appQuery()
	q.Set("cascade", strconv.FormatBool(cascade))
	if cascade {
		q.Set("propagationPolicy", "foreground")
	}
	return c.do(ctx, "delete application "+name, http.MethodDelete, "/api/v1/applications/"+url.PathEscape(name), q, nil, nil)
}

// DeleteResource deletes one live resource of the application (foreground).
func (c *Client) DeleteResource(ctx context.Context, name string, r ResourceRef) error {
	q := c.appQuery()
	q.Set("namespace", r.Namespace)
	q.Set("resourceName", r.Name)
	q.Set("version", r.Version)
	q.Set("group", r.Group)
	q.Set("kind", r.Kind)
	return c.do(ctx, "delete "+r.String()+" of "+name, http.MethodDelete, "/api/v1/applications/"+url.PathEscape(name)+"/resource", q, nil, nil)
}

func (c *Client) appQuery() url.Values {
	q := url.Values{}
	if c.appNamespace != "" {
		q.Set("appNamespace", c.appNamespace)
	}
	return q
}

// newRequest builds an authenticated request. The token only ever goes into
// the Authorization header; no error or log line carries request headers.
func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body any) (*http.Request, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	req.Header.Set("Authorization", "Bearer "+c.token)
	c.mu.Unlock()
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "deploystep")
	// argocd-server refuses every non-GET request without a JSON content
	// type (415 "Invalid content type", its CSRF guard), bodiless DELETEs too.
	if body != nil || method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do sends one request under its own deadline and decodes the JSON answer
// into out (when not nil).
func (c *Client) do(ctx context.Context, op, method, path string, q url.Values, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout)
	defer cancel()
	req, err := c.newRequest(ctx, method, path, q, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	c.calls.Add(1)
	resp, err := c.hc.Do(req)
	if err != nil {
		return &NetError{Op: op, Err: stripURL(err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return &NetError{Op: op, Err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.apiError(op, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		// A 200 that is not the JSON Argo CD sends (a proxy's HTML page, a
		// body cut short) says nothing about the request: a transport
		// fault, retried like one. Every write the step sends is
		// idempotent or checked before it is repeated.
		return &NetError{Op: op, Err: fmt.Errorf("undecodable answer (HTTP %d, %s, %d bytes): %v",
			resp.StatusCode, orDash(resp.Header.Get("Content-Type")), len(data), err)}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// apiError is parseAPIError with credentials masked: a proxy or server that
// echoes the request's Authorization header must not put the token into a
// log line or the result file.
func (c *Client) apiError(op string, status int, body []byte) *APIError {
	// Before parsing: the message is cut to a few hundred characters, which
	// could leave a token's prefix that no pattern recognises.
	return parseAPIError(op, status, []byte(c.Redact(string(body))))
}

// Redact masks the token and anything that looks like a credential in s.
func (c *Client) Redact(s string) string {
	c.mu.Lock()
	tok := c.token
	c.mu.Unlock()
	return redact.String(s, tok)
}

// stripURL drops the "Get \"https://...\":" prefix net/http adds, which
// repeats the query string in every message.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
