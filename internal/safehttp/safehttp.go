// Package safehttp is the one HTTP client policy of every client deployctl
// and deploystep have (the Argo CD API, the plugin's in-cluster Workflow
// reads, the step's HTTP probe): no redirect is ever followed, every
// answer is read through a bound counted after decompression, TLS is what
// the caller configured (TLS 1.2 at least), and an error body becomes
// message text only through ErrorText, which redacts before it clips.
// Standard library only, so the in-step binary can use it.
package safehttp

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/redact"
)

// Documented limits (README "Limits").
const (
	// AnswerLimit bounds one API answer, decompressed: an Application, its
	// resource tree, Argo CD's settings, one message of a watch stream.
	AnswerLimit int64 = 16 << 20
	// errorHead is what is read of an error answer: ErrorText keeps far
	// less, and a body cut here is cut past anything it shows.
	errorHead = 64 << 10
	// MessageMax bounds the text ErrorText makes of an error answer.
	MessageMax = 1024
	// InFlightBudget bounds the bytes of all answers being read at once in
	// this process: the plugin's sidecar runs up to 1,000 steps, and each
	// answer's own bound times the steps reading would pass its memory
	// limit. A read past it fails with an *OverBudgetError, a transient
	// fault (another read will have finished when it is tried again).
	InFlightBudget int64 = 64 << 20
)

// inFlight is the bytes read and not yet released by every open Body.
var inFlight atomic.Int64

// OverBudgetError is a read refused because the answers being read
// together passed InFlightBudget.
type OverBudgetError struct{ Name string }

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("%s: not read now: the answers being read at once pass this process's %s budget", e.Name, readlimit.Human(InFlightBudget))
}

// TLS is the transport security a client is configured with.
type TLS struct {
	CAFile             string // PEM bundle, read up to readlimit.Secret
	CAPEM              []byte // PEM bundle already read
	SystemRoots        bool   // trust the system's roots too (else only the CA, when one is given)
	InsecureSkipVerify bool   // opt-in: accept any certificate
}

// Config says how a client connects.
type Config struct {
	TLS   TLS
	Proxy bool // use HTTP(S)_PROXY from the environment
	// Timeout bounds a whole exchange, body included; 0: the caller's
	// context bounds it.
	Timeout time.Duration
	// ReturnRedirects makes a 3xx the answer itself instead of an error,
	// still never followed: for a probe that sends no credential and
	// judges the status alone.
	ReturnRedirects bool
}

// Client is an HTTP client under this package's policy; safe for
// concurrent use.
type Client struct {
	hc *http.Client
}

// New builds a client; reading the CA file is the only thing that can fail.
func New(cfg Config) (*Client, error) {
	tc, err := tlsConfig(cfg.TLS)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if cfg.Proxy {
		tr.Proxy = http.ProxyFromEnvironment
	}
	check := refuseRedirect
	if cfg.ReturnRedirects {
		check = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return &Client{hc: &http.Client{Transport: tr, Timeout: cfg.Timeout, CheckRedirect: check}}, nil
}

func tlsConfig(t TLS) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // opt-in flag
	pem := t.CAPEM
	if t.CAFile != "" {
		b, err := readlimit.ReadFile(t.CAFile, readlimit.Secret)
		if err != nil {
			return nil, fmt.Errorf("reading the CA file: %w", err)
		}
		pem = b
	}
	if pem == nil {
		return tc, nil
	}
	var pool *x509.CertPool
	if t.SystemRoots {
		pool, _ = x509.SystemCertPool()
	}
	if pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		name := t.CAFile
		if name == "" {
			name = "the CA"
		}
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", name)
	}
	tc.RootCAs = pool
	return tc, nil
}

// RedirectError is a redirect answer, refused: a request carries a
// credential, and the next hop could be any host (a "Healthy" from there
// means nothing). Location is where it pointed, without user information
// or query.
type RedirectError struct {
	Status   int
	Location string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server answered HTTP %d, a redirect to %s: not followed (no redirect is; give the server's own address)", e.Status, e.Location)
}

func refuseRedirect(req *http.Request, via []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	return &RedirectError{Status: status, Location: Where(req.URL)}
}

// Where is u as a message may show it: scheme, host and path, never user
// information, query or fragment.
func Where(u *url.URL) string {
	if u == nil {
		return "-"
	}
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	s := v.String()
	if u.RawQuery != "" {
		s += "?…"
	}
	return redact.Snippet(s, MessageMax)
}

// Answer is a response whose body is read through a bound.
type Answer struct {
	StatusCode int
	Header     http.Header
	Body       *Body
}

// OK reports a 2xx status.
func (a *Answer) OK() bool { return a.StatusCode >= 200 && a.StatusCode <= 299 }

// Open sends req and returns the answer with its body unread, bounded by
// limit bytes after decompression. The caller closes the body. An error
// is the transport's cause (the request's URL left out: it may repeat a
// query) or a *RedirectError.
func (c *Client) Open(req *http.Request, name string, limit int64) (*Answer, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		var re *RedirectError
		if errors.As(err, &re) {
			return nil, re
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	return &Answer{StatusCode: resp.StatusCode, Header: resp.Header,
		Body: &Body{rc: resp.Body, name: name, limit: limit, left: limit}}, nil
}

// Do is Open that reads the whole body (up to limit) and closes it.
// A body over limit is a *readlimit.TooLargeError.
func (c *Client) Do(req *http.Request, name string, limit int64) (*Answer, []byte, error) {
	a, err := c.Open(req, name, limit)
	if err != nil {
		return nil, nil, err
	}
	defer a.Body.Close()
	if !a.OK() {
		return a, a.Body.Head(), nil
	}
	data, err := readlimit.ReadAll(a.Body, name, limit)
	return a, data, err
}

// Body is an answer's body under its bound: past it, Read fails with a
// *readlimit.TooLargeError; past the process's InFlightBudget, with an
// *OverBudgetError. Close may be called while a Read runs (a watch
// stream ended from another goroutine); Reads are one at a time.
type Body struct {
	rc          io.ReadCloser
	name        string
	limit, left int64
	held        atomic.Int64 // counted in inFlight until Release or Close
	closed      atomic.Bool
}

func (b *Body) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &readlimit.TooLargeError{Name: b.name, Limit: b.limit}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	b.held.Add(int64(n))
	total := inFlight.Add(int64(n))
	if b.closed.Load() {
		b.Release() // closed while this Read ran: nothing stays held
	}
	if b.left < 0 {
		return n, &readlimit.TooLargeError{Name: b.name, Limit: b.limit}
	}
	if total > InFlightBudget {
		return n, &OverBudgetError{Name: b.name}
	}
	return n, err
}

// Close closes the underlying body and releases what it held.
func (b *Body) Close() error {
	b.closed.Store(true)
	b.Release()
	return b.rc.Close()
}

// Release says the bytes read so far are no longer held (a decoder took
// an item and let its text go); the answer's own bound still counts them.
func (b *Body) Release() { inFlight.Add(-b.held.Swap(0)) }

// Reset starts the bound over: a stream bounds each message, not the
// stream's whole life.
func (b *Body) Reset() {
	b.Release()
	b.left = b.limit
}

// Head reads what ErrorText needs of an error answer: its first 64 KiB.
func (b *Body) Head() []byte {
	data, _ := readlimit.ReadAll(io.LimitReader(b.rc, errorHead), b.name, errorHead)
	return data
}

// ErrorText is the one way an error answer becomes message text: the
// "message" (else "error") of a JSON error body (Argo CD's gateway,
// Kubernetes' Status), else the body, else the status text; redacted
// with the client's secrets, then cut to MessageMax bytes (redact.Snippet:
// masking before clipping, never mid-character).
func ErrorText(status int, body []byte, secrets ...string) string {
	text := strings.TrimSpace(string(body))
	var e struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil {
		if e.Message != "" {
			text = e.Message
		} else if e.Error != "" {
			text = e.Error
		}
	}
	if text == "" {
		text = http.StatusText(status)
	}
	return redact.Snippet(text, MessageMax, secrets...)
}
