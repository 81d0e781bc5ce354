// Package check is the step's extra checks (--check): readiness probes run
// after the application is Healthy, within the same health deadline. A
// resource check (resource:GROUP/KIND/NAMESPACE/NAME) is read from the
// application's resource tree by the step; an HTTP check (http:URL=CODES)
// probes here. Standard library only: deploystep links it.
package check

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/internal/safehttp"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// State is the outcome of one attempt.
type State int

const (
	Waiting State = iota // not yet: try again
	Passed
	Failed // definitely failed: stop now
)

// Check is a parsed --check: a *Resource or an *HTTP; String is the
// argument it was parsed from.
type Check interface {
	String() string
}

// Parse parses resource:GROUP/KIND/NAMESPACE/NAME or http:URL=CODES.
func Parse(s string) (Check, error) {
	kind, spec, ok := strings.Cut(s, ":")
	switch {
	case ok && kind == "resource":
		parts := strings.Split(spec, "/")
		if len(parts) != 4 || parts[1] == "" || parts[3] == "" {
			return nil, invalid("--check %q: want resource:GROUP/KIND/NAMESPACE/NAME (GROUP empty for the core group, NAMESPACE empty for cluster-scoped)", s)
		}
		return &Resource{Ref: argocd.ResourceRef{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}}, nil
	case ok && kind == "http":
		i := strings.LastIndex(spec, "=")
		if i < 0 {
			return nil, invalid("--check %q: want http:URL=CODES", s)
		}
		url, list := spec[:i], spec[i+1:]
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return nil, invalid("--check %q: the URL must start with http:// or https://", s)
		}
		var codes []int
		for _, c := range strings.Split(list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || n < 100 || n > 599 {
				return nil, invalid("--check %q: %q is not an HTTP status code", s, c)
			}
			codes = append(codes, n)
		}
		return &HTTP{URL: url, Codes: codes}, nil
	}
	return nil, invalid("--check %q: want resource:GROUP/KIND/NAMESPACE/NAME or http:URL=CODES", s)
}

// Resource: the named resource is in the application's resource tree
// and Healthy. A resource kind without a health assessment (ConfigMap,
// Secret, ...) passes by being present.
type Resource struct {
	Ref argocd.ResourceRef
}

func (c *Resource) String() string {
	return fmt.Sprintf("resource:%s/%s/%s/%s", c.Ref.Group, c.Ref.Kind, c.Ref.Namespace, c.Ref.Name)
}

// HTTP: GET the URL; the status must be one of Codes (e.g. Vault's
// /v1/sys/health answers 200 only when initialized, unsealed and active).
type HTTP struct {
	URL   string
	Codes []int
}

func (c *HTTP) String() string {
	codes := make([]string, len(c.Codes))
	for i, n := range c.Codes {
		codes[i] = strconv.Itoa(n)
	}
	return "http:" + c.URL + "=" + strings.Join(codes, ",")
}

// probeClient is safehttp's, taking a redirect as the answer: a probe
// must not follow one into a 200 it was not asked about, and a 3xx may be
// the status it waits for. It sends no credential.
var probeClient = mustProbeClient()

func mustProbeClient() *safehttp.Client {
	c, err := safehttp.New(safehttp.Config{Proxy: true, ReturnRedirects: true})
	if err != nil {
		panic(err) // no CA file: nothing can fail
	}
	return c
}

// probeBodyLimit is what is read of a probe's answer, only to reuse the
// connection.
const probeBodyLimit = 64 << 10

// Attempt probes once, each request bounded by timeout. It never fails for
// good: a refused connection or another status is tried again until the
// health deadline.
func (c *HTTP) Attempt(ctx context.Context, timeout time.Duration) (State, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return Failed, redact.Snippet(err.Error(), safehttp.MessageMax)
	}
	req.Header.Set("User-Agent", "deploystep")
	a, err := probeClient.Open(req, "the probe's answer", probeBodyLimit)
	if err != nil {
		return Waiting, redact.Snippet(err.Error(), safehttp.MessageMax)
	}
	_, _ = io.Copy(io.Discard, a.Body)
	a.Body.Close()
	detail := fmt.Sprintf("HTTP %d", a.StatusCode)
	if slices.Contains(c.Codes, a.StatusCode) {
		return Passed, detail
	}
	return Waiting, detail
}

func invalid(format string, args ...any) error {
	return exitcode.With(exitcode.Invalid, fmt.Errorf(format, args...))
}
