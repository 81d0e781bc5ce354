package spec

import (
	"errors"
	"regexp"

	"github.com/deployctl/deployctl/internal/duration"
)

// checkSyncRetry holds syncPolicy.retry's backoff durations to what Argo
// CD reads (internal/duration.ParseArgoCD): a text Argo CD cannot parse, or
// one it parses into a wrapped, negative wait, is refused at its line. The
// schema's pattern already refuses a sign or a unit Argo CD does not know.
func (d *Document) checkSyncRetry(errs *Errors, path string, r *SyncRetry) {
	if r == nil || r.Backoff == nil {
		return
	}
	for _, f := range []struct{ name, v string }{
		{"duration", r.Backoff.Duration},
		{"maxDuration", r.Backoff.MaxDuration},
	} {
		if f.v == "" || !durationSyntax(f.v) {
			continue // empty is Argo CD's default; a bad text is the schema's error
		}
		if _, err := duration.ParseArgoCD(f.v); err != nil && errors.Is(err, duration.ErrRange) {
			*errs = append(*errs, d.At(path+".backoff."+f.name, "%v", err))
		}
	}
}

// durationSyntax is the schema's argoDuration pattern: only such texts are
// judged here, so a typo gets one message, not two.
func durationSyntax(s string) bool { return argoDurationRe.MatchString(s) }

var argoDurationRe = regexp.MustCompile(`^([0-9]+|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`)
