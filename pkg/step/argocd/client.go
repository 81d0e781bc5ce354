// Package argocd is a small client for the Argo CD API server's REST
// (grpc-gateway JSON) API: the endpoints the Argo CD UI uses. It links only the
// standard library, so the in-step binary stays a few megabytes instead of the
// ~80 MB that argo-cd's own types and apiclient pull in.
package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safehttp"
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
	hc             *safehttp.Client
	tokenFile      string
	requestTimeout time.Duration
	appNamespace   string

	mu    sync.Mutex
	token string

	calls atomic.Int64
}

// New checks the configuration, reads the token and builds the client
// (internal/safehttp: no redirect followed, every answer bounded). Every
// problem is reported, together.
func New(cfg Config) (*Client, error) {
	var problems []error
	switch {
	case cfg.Server == "":
		problems = append(problems, errors.New("the Argo CD server is required (host:port)"))
	case strings.Contains(cfg.Server, "://"):
		problems = append(problems, fmt.Errorf("server %q: give host:port without a scheme (use --plaintext for HTTP)", cfg.Server))
	}
	if cfg.RequestTimeout <= 0 {
		problems = append(problems, errors.New("the request timeout must be positive"))
	}
	hc, err := safehttp.New(safehttp.Config{Proxy: true,
		TLS: safehttp.TLS{CAFile: cfg.CAFile, SystemRoots: true, InsecureSkipVerify: cfg.InsecureSkipVerify}})
	if err != nil {
		problems = append(problems, err)
	}
	c := &Client{hc: hc, tokenFile: cfg.TokenFile, requestTimeout: cfg.RequestTimeout, appNamespace: cfg.AppNamespace}
	if cfg.TokenFile == "" {
		problems = append(problems, errors.New("the Argo CD token file is required"))
	} else if err := c.ReloadToken(); err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	scheme := "https"
	if cfg.Plaintext {
		scheme = "http"
	}
	c.base = scheme + "://" + cfg.Server
	if root := strings.Trim(cfg.RootPath, "/"); root != "" {
		c.base += "/" + root
	}
	return c, nil
}

// ReloadToken re-reads the token file: a mounted Secret may be replaced while
// the step runs (a token not yet valid is one of the retried faults).
func (c *Client) ReloadToken() error {
	tok, err := safehttp.ReadBearerToken(c.tokenFile)
	if err != nil {
		return fmt.Errorf("reading the Argo CD token: %w", err)
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
	var out []ResourceDiff
	err := managed(ctx, c, c.appQuery(), name, func(d ResourceDiff) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

// ManagedTargets calls fn with each managed resource of the Application
// appNamespace/name (appNamespace "": the client's) as its source renders
// it, the target state, as the answer arrives: an answer is never held
// whole. An error of fn ends the read and is returned as it is.
func (c *Client) ManagedTargets(ctx context.Context, appNamespace, name string, fn func(ManagedTarget) error) error {
	q := c.appQuery()
	if appNamespace != "" {
		q.Set("appNamespace", appNamespace)
	}
	return managed(ctx, c, q, name, fn)
}

// ManagedTarget is an item of managed-resources as `import --live` reads
// it: the target state (JSON; "" or "null" for a resource only live, which
// the next sync prunes), not the live one.
type ManagedTarget struct {
	Group       string `json:"group,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	TargetState string `json:"targetState,omitempty"`
}

// ManagedLimit bounds one managed-resources answer: every resource of an
// Application in up to four states (CRDs with their schemas), the limit of
// one import input (readlimit.Import). It is decoded item by item, keeping
// only the fields of T.
const ManagedLimit = readlimit.Import

// managed reads GET .../managed-resources, {"items": [...]}, handing each
// item to fn as T.
func managed[T any](ctx context.Context, c *Client, q url.Values, name string, fn func(T) error) error {
	var stop error // fn's, returned as it is
	err := c.stream(ctx, "managed resources of "+name, "/api/v1/applications/"+url.PathEscape(name)+"/managed-resources", q, ManagedLimit,
		func(dec *json.Decoder, body *safehttp.Body) error {
			return eachItem(dec, func(d *json.Decoder) error {
				var it T
				if err := d.Decode(&it); err != nil {
					return err
				}
				body.Release() // the item's text is gone; only T's fields stay
				stop = fn(it)
				return stop
			})
		})
	if stop != nil {
		return stop
	}
	return err
}

// eachItem walks {"items": [...], ...}, calling item with the decoder at
// each element of items; other members are skipped.
func eachItem(dec *json.Decoder, item func(*json.Decoder) error) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key != "items" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if t, err := dec.Token(); err != nil {
			return err
		} else if t == nil {
			continue // "items": null
		} else if t != json.Delim('[') {
			return fmt.Errorf("items is %v, not an array", t)
		}
		for dec.More() {
			if err := item(dec); err != nil {
				return err
			}
		}
		if err := expectDelim(dec, ']'); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("want %v, not %v", d, t)
	}
	return nil
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
// (at most safehttp.AnswerLimit bytes) into out (when not nil).
func (c *Client) do(ctx context.Context, op, method, path string, q url.Values, body, out any) error {
	return c.exchange(ctx, op, method, path, q, body, safehttp.AnswerLimit, func(a *safehttp.Answer) error {
		data, err := readlimit.ReadAll(a.Body, "the answer", safehttp.AnswerLimit)
		if err != nil {
			return err
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("undecodable answer (HTTP %d, %s, %d bytes): %v",
				a.StatusCode, orDash(a.Header.Get("Content-Type")), len(data), err)
		}
		return nil
	})
}

// stream is a GET whose answer (at most limit bytes) is decoded as it
// arrives, never held whole.
func (c *Client) stream(ctx context.Context, op, path string, q url.Values, limit int64, decode func(*json.Decoder, *safehttp.Body) error) error {
	return c.exchange(ctx, op, http.MethodGet, path, q, nil, limit, func(a *safehttp.Answer) error {
		if err := decode(json.NewDecoder(a.Body), a.Body); err != nil {
			return fmt.Errorf("undecodable answer (HTTP %d, %s): %w", a.StatusCode, orDash(a.Header.Get("Content-Type")), err)
		}
		return nil
	})
}

// exchange sends one request under its own deadline: a failure to get an
// answer is a NetError, a redirect or non-2xx answer an APIError, and a
// 2xx answer is read by read. A 2xx that read cannot take (a proxy's HTML
// page, a body cut short, one over its bound) says nothing about the
// request: a transport fault, retried like one. Every write the step sends
// is idempotent or checked before it is repeated.
func (c *Client) exchange(ctx context.Context, op, method, path string, q url.Values, body any, limit int64, read func(*safehttp.Answer) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout)
	defer cancel()
	req, err := c.newRequest(ctx, method, path, q, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	c.calls.Add(1)
	a, err := c.hc.Open(req, "the answer", limit)
	if err != nil {
		return c.transportError(op, err)
	}
	defer a.Body.Close()
	if !a.OK() {
		return c.apiError(op, a.StatusCode, a.Body.Head())
	}
	if err := read(a); readlimit.IsTooLarge(err) {
		// Not retried: the same server would send the same again.
		return &APIError{Op: op, Status: a.StatusCode, Message: err.Error() + ": not read further"}
	} else if err != nil {
		return &NetError{Op: op, Err: err}
	}
	return nil
}

// transportError is a request that got no answer we may use: a refused
// redirect (never retried: it will point elsewhere again) or a transport
// fault.
func (c *Client) transportError(op string, err error) error {
	var re *safehttp.RedirectError
	if errors.As(err, &re) {
		return &APIError{Op: op, Status: re.Status, Message: c.errorText(re.Status, []byte(re.Error()))}
	}
	return &NetError{Op: op, Err: err}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// apiError is parseAPIError with the token: a proxy or server that echoes
// the request's Authorization header must not put the token into a log
// line or the result file (safehttp.ErrorText masks before it clips).
func (c *Client) apiError(op string, status int, body []byte) *APIError {
	return parseAPIError(op, status, body, c.currentToken())
}

// errorText is safehttp.ErrorText with the token.
func (c *Client) errorText(status int, body []byte) string {
	return safehttp.ErrorText(status, body, c.currentToken())
}

func (c *Client) currentToken() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}
