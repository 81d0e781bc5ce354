package step

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// Extra checks run after the application is Healthy, within the same health
// deadline. They are readiness probes: each is retried every checkInterval
// until it passes; a check that has not passed by the deadline fails the step
// (exit 1), except that a resource check whose node is Degraded fails at once.

// checkState is the outcome of one attempt.
type checkState int

const (
	checkWaiting checkState = iota // not yet: try again
	checkPassed
	checkFailed // definitely failed: stop now
)

type check interface {
	String() string
	// attempt runs the check once. apiErr is set when Argo CD could not be
	// asked (transient): a deadline then is an API fault, not a failed check.
	attempt(ctx context.Context, r *runner, app string) (state checkState, detail string, apiErr error)
}

// parseCheck parses resource:GROUP/KIND/NAMESPACE/NAME or http:URL=CODES.
func parseCheck(s string) (check, error) {
	kind, spec, ok := strings.Cut(s, ":")
	switch {
	case ok && kind == "resource":
		parts := strings.Split(spec, "/")
		if len(parts) != 4 || parts[1] == "" || parts[3] == "" {
			return nil, fail(exitcode.Invalid, "--check %q: want resource:GROUP/KIND/NAMESPACE/NAME (GROUP empty for the core group, NAMESPACE empty for cluster-scoped)", s)
		}
		return &resourceCheck{ref: argocd.ResourceRef{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}}, nil
	case ok && kind == "http":
		i := strings.LastIndex(spec, "=")
		if i < 0 {
			return nil, fail(exitcode.Invalid, "--check %q: want http:URL=CODES", s)
		}
		url, list := spec[:i], spec[i+1:]
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return nil, fail(exitcode.Invalid, "--check %q: the URL must start with http:// or https://", s)
		}
		var codes []int
		for _, c := range strings.Split(list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || n < 100 || n > 599 {
				return nil, fail(exitcode.Invalid, "--check %q: %q is not an HTTP status code", s, c)
			}
			codes = append(codes, n)
		}
		return &httpCheck{url: url, codes: codes}, nil
	}
	return nil, fail(exitcode.Invalid, "--check %q: want resource:GROUP/KIND/NAMESPACE/NAME or http:URL=CODES", s)
}

// runChecks runs every check until all have passed.
func (r *runner) runChecks(ctx context.Context, app string, checks []check, res *stepresult.SyncResult) error {
	if len(checks) == 0 {
		return nil
	}
	results := make([]stepresult.CheckResult, len(checks))
	apiErrs := make([]error, len(checks))
	for i, c := range checks {
		results[i].Check = c.String()
	}
	res.Checks = results
	for {
		pending := 0
		for i, c := range checks {
			if results[i].Passed {
				continue
			}
			state, detail, apiErr := c.attempt(ctx, r, app)
			results[i].Attempts++
			results[i].Detail, apiErrs[i] = detail, apiErr
			switch state {
			case checkPassed:
				results[i].Passed = true
				r.log("check %s passed: %s", c, detail)
			case checkFailed:
				return fail(exitcode.Failure, "check %s failed: %s", c, detail)
			default:
				pending++
			}
		}
		if pending == 0 {
			return nil
		}
		if err := sleep(ctx, r.t.checkInterval); err != nil {
			if errors.Is(err, context.Canceled) {
				return interrupted()
			}
			for i := range checks {
				if !results[i].Passed {
					if apiErrs[i] != nil {
						return fail(exitcode.Transient, "check %s: the Argo CD API was failing when the health deadline passed: %v", checks[i], apiErrs[i])
					}
					return fail(exitcode.Failure, "check %s did not pass before the health deadline; last: %s", checks[i], results[i].Detail)
				}
			}
		}
	}
}

// resourceCheck: the named resource is in the application's resource tree
// and Healthy. A resource kind without a health assessment (ConfigMap,
// Secret, ...) passes by being present.
type resourceCheck struct {
	ref argocd.ResourceRef
}

func (c *resourceCheck) String() string {
	return fmt.Sprintf("resource:%s/%s/%s/%s", c.ref.Group, c.ref.Kind, c.ref.Namespace, c.ref.Name)
}

func (c *resourceCheck) attempt(ctx context.Context, r *runner, app string) (checkState, string, error) {
	tree, err := r.c.ResourceTree(ctx, app)
	if err != nil {
		if argocd.IsTransient(err) || argocd.IsAuth(err) {
			return checkWaiting, err.Error(), err
		}
		return checkFailed, err.Error(), nil
	}
	for _, n := range tree.Nodes {
		if !n.Same(c.ref) {
			continue
		}
		switch {
		case n.Health == nil:
			return checkPassed, "present (no health assessment for this kind)", nil
		case n.Health.Status == argocd.HealthHealthy:
			return checkPassed, "Healthy", nil
		case n.Health.Status == argocd.HealthDegraded:
			return checkFailed, "Degraded" + withMessage(n.Health.Message), nil
		default:
			return checkWaiting, string(n.Health.Status) + withMessage(n.Health.Message), nil
		}
	}
	return checkWaiting, "not in the application's resource tree", nil
}

// httpCheck: GET the URL; the status must be one of codes (e.g. Vault's
// /v1/sys/health answers 200 only when initialized, unsealed and active).
type httpCheck struct {
	url   string
	codes []int
}

func (c *httpCheck) String() string {
	codes := make([]string, len(c.codes))
	for i, n := range c.codes {
		codes[i] = strconv.Itoa(n)
	}
	return "http:" + c.url + "=" + strings.Join(codes, ",")
}

var probeClient = &http.Client{
	// A probe must not follow a redirect into a 200 it was not asked about.
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (c *httpCheck) attempt(ctx context.Context, r *runner, _ string) (checkState, string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return checkFailed, err.Error(), nil
	}
	req.Header.Set("User-Agent", "deploystep")
	resp, err := probeClient.Do(req)
	if err != nil {
		return checkWaiting, err.Error(), nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	detail := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if slices.Contains(c.codes, resp.StatusCode) {
		return checkPassed, detail, nil
	}
	return checkWaiting, detail, nil
}
