package spec

import (
	"strings"
	"testing"
)

// oneStack starts a spec of one stack s; its apps follow.
const oneStack = `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: p}
spec:
  workflow: {image: "r/deploystep:1"}
  stacks:
    - name: s
      apps:
`

const retrySpec = oneStack + `        - name: a
          source: {repoURL: https://git.example.com/p.git, path: a}
          destination: {namespace: a}
          syncPolicy:
            retry: {limit: 5, backoff: {duration: DUR, maxDuration: "1h"}}
`

// Argo CD's retry durations are accepted or refused as Argo CD reads them:
// a number of seconds or a Go duration, never one Argo CD cannot parse or
// wraps into a negative wait. The refusal names file, line and field.
func TestSyncRetryDurationsAsArgoCD(t *testing.T) {
	for _, c := range []struct {
		dur, err string
	}{
		{"30s", ""},
		{"2m", ""},
		{"1h", ""},
		{"300", ""},
		{"0", ""},
		{"-1", `p.yaml:13: spec.stacks[0].apps[0].syncPolicy.retry.backoff.duration: does not match pattern`},
		{"3000000h", `p.yaml:13: spec.stacks[0].apps[0].syncPolicy.retry.backoff.duration: "3000000h" is longer than the longest duration there is (2562047h47m16.854775807s): Argo CD cannot parse it`},
		{"99999999999999999999", `p.yaml:13: spec.stacks[0].apps[0].syncPolicy.retry.backoff.duration: "99999999999999999999" is more seconds than Argo CD can read (it fails to parse it)`},
		{"9223372037", `p.yaml:13: spec.stacks[0].apps[0].syncPolicy.retry.backoff.duration: "9223372037" is more seconds than Argo CD can hold: it reads it as a negative wait`},
		{"9223372036", ""},
	} {
		_, err := Load("p.yaml", []byte(strings.Replace(retrySpec, "DUR", `"`+c.dur+`"`, 1)))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: refused: %v", c.dur, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: got %v, want %s", c.dur, err, c.err)
		}
	}
	// maxDuration, and the defaults' syncPolicy, are checked the same way.
	s := strings.Replace(retrySpec, "DUR", "5s", 1)
	s = strings.Replace(s, `maxDuration: "1h"`, `maxDuration: "3000000h"`, 1)
	_, err := Load("p.yaml", []byte(s))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:13: spec.stacks[0].apps[0].syncPolicy.retry.backoff.maxDuration: \"3000000h\"") {
		t.Errorf("maxDuration 3000000h: %v", err)
	}
	s = strings.Replace(s, "  stacks:", "  defaults: {syncPolicy: {retry: {backoff: {duration: \"9223372037\"}}}}\n  stacks:", 1)
	_, err = Load("p.yaml", []byte(s))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:6: spec.defaults.syncPolicy.retry.backoff.duration:") {
		t.Errorf("defaults 9223372037: %v", err)
	}

	// A negative factor, and an uncapped wait past Go's range.
	for _, c := range []struct{ backoff, err string }{
		{`{duration: "5s", factor: -2}`, `p.yaml:13: spec.stacks[0].apps[0].syncPolicy.retry.backoff.factor: -2 is negative`},
		{`{duration: "1h", factor: 100, maxDuration: "0"}`, `p.yaml:13: spec.stacks[0].apps[0].syncPolicy.retry.backoff.maxDuration: 0 leaves the wait uncapped, and 1h0m0s × 100^4 is past Go's range`},
		{`{duration: "1h", factor: 2, maxDuration: "0"}`, ""},
		{`{duration: "1h", factor: 10}`, ""},
	} {
		s := strings.Replace(retrySpec, `{duration: DUR, maxDuration: "1h"}`, c.backoff, 1)
		_, err := Load("p.yaml", []byte(s))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: refused: %v", c.backoff, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: got %v, want %s", c.backoff, err, c.err)
		}
	}
	s = strings.Replace(retrySpec, `limit: 5, backoff: {duration: DUR, maxDuration: "1h"}`, `limit: -1, backoff: {maxDuration: "0"}`, 1)
	if _, err := Load("p.yaml", []byte(s)); err == nil || !strings.Contains(err.Error(), "retries without end") {
		t.Errorf("limit -1, maxDuration 0: %v", err)
	}
}
