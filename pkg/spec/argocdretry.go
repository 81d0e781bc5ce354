package spec

import (
	"errors"
	"math"
	"regexp"
	"time"

	"github.com/deployctl/deployctl/internal/duration"
)

// Argo CD's defaults for a retry backoff field left out
// (common.DefaultSyncRetryDuration, …MaxDuration, …Factor).
const (
	argoRetryDuration    = 5 * time.Second
	argoRetryMaxDuration = 3 * time.Minute
	argoRetryFactor      = 2
)

// checkSyncRetry holds syncPolicy.retry's backoff to what Argo CD reads
// (internal/duration.ParseArgoCD): a text Argo CD cannot parse, or one it
// parses into a wrapped, negative wait, is refused at its line. The
// schema's pattern already refuses a sign or a unit Argo CD does not know.
// Argo CD waits duration × factor^n before retry n+1, capped by
// maxDuration unless that is 0: a negative factor, or an uncapped wait
// past Go's range (which Argo CD turns into a negative one), is refused.
func (d *Document) checkSyncRetry(errs *Errors, path string, r *SyncRetry) {
	if r == nil || r.Backoff == nil {
		return
	}
	b := r.Backoff
	got := map[string]time.Duration{"duration": argoRetryDuration, "maxDuration": argoRetryMaxDuration}
	ok := true
	for _, f := range []struct{ name, v string }{
		{"duration", b.Duration},
		{"maxDuration", b.MaxDuration},
	} {
		if f.v == "" || !durationSyntax(f.v) {
			ok = ok && f.v == ""
			continue // empty is Argo CD's default; a bad text is the schema's error
		}
		v, err := duration.ParseArgoCD(f.v)
		if err != nil && errors.Is(err, duration.ErrRange) {
			*errs = append(*errs, d.At(path+".backoff."+f.name, "%v", err))
		}
		got[f.name], ok = v, ok && err == nil
	}
	factor := int64(argoRetryFactor)
	if b.Factor != nil {
		factor = *b.Factor
	}
	switch {
	case factor < 0:
		*errs = append(*errs, d.At(path+".backoff.factor", "%d is negative: Argo CD would wait a negative time, retrying at once", factor))
	case !ok || got["maxDuration"] != 0 || factor <= 1 || got["duration"] == 0:
	case r.Limit < 0:
		*errs = append(*errs, d.At(path+".backoff.maxDuration", "0 leaves the wait uncapped, and with limit %d (retries without end) and factor %d it grows past Go's range, which Argo CD turns into a negative wait: set a maxDuration", r.Limit, factor))
	case r.Limit > 0 && float64(got["duration"])*math.Pow(float64(factor), float64(r.Limit-1)) >= float64(duration.Max):
		*errs = append(*errs, d.At(path+".backoff.maxDuration", "0 leaves the wait uncapped, and %s × %d^%d is past Go's range, which Argo CD turns into a negative wait: set a maxDuration or lower limit or factor", got["duration"], factor, r.Limit-1))
	}
}

// durationSyntax is the schema's argoDuration pattern: only such texts are
// judged here, so a typo gets one message, not two.
func durationSyntax(s string) bool { return argoDurationRe.MatchString(s) }

var argoDurationRe = regexp.MustCompile(`^([0-9]+|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`)
