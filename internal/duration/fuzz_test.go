package duration

import (
	"errors"
	"testing"
	"time"
)

// Parse accepts exactly what time.ParseDuration does, with the same value,
// and calls a refusal a range error only for a text of duration syntax.
// ParseArgoCD agrees with Argo CD's parse wherever that is not wrapped.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"30s", "1h30m", "3000000h", "300", "9223372037", "-1", ".5s", "1.s", "+2m", "99999999999999999999", "1µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := time.ParseDuration(s)
		got, err := Parse(s)
		if (err == nil) != (werr == nil) || got != want {
			t.Fatalf("Parse(%q) = %v, %v; time.ParseDuration %v, %v", s, got, err, want, werr)
		}
		if errors.Is(err, ErrRange) && !goSyntax(s) {
			t.Fatalf("Parse(%q): a range error for a text that is not a duration", s)
		}
		a, aerr := argoCD(s)
		g, gerr := ParseArgoCD(s)
		switch {
		case gerr == nil && (aerr != nil || a != g):
			t.Fatalf("ParseArgoCD(%q) = %v; Argo CD %v, %v", s, g, a, aerr)
		case gerr != nil && aerr == nil && !errors.Is(gerr, ErrRange):
			t.Fatalf("ParseArgoCD(%q) refused (%v) what Argo CD reads as %v", s, gerr, a)
		}
	})
}
