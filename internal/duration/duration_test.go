package duration

import (
	"errors"
	"flag"
	"strconv"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		kind error
	}{
		{"30s", 30 * time.Second, nil},
		{"1h30m", 90 * time.Minute, nil},
		{"0", 0, nil},
		{"2562047h", 2562047 * time.Hour, nil},
		{"2562048h", 0, ErrRange},
		{"3000000h", 0, ErrRange},
		{"9999999999999h", 0, ErrRange},
		{"99999999999999999999s", 0, ErrRange},
		{"300", 0, ErrSyntax},
		{"5 m", 0, ErrSyntax},
		{"", 0, ErrSyntax},
		{"h", 0, ErrSyntax},
		{"1d", 0, ErrSyntax},
	} {
		got, err := Parse(c.in)
		if !errors.Is(err, c.kind) || (c.kind == nil && err != nil) || got != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", c.in, got, err, c.want, c.kind)
		}
	}
}

// TestParseArgoCD holds ParseArgoCD against Argo CD's own parse (its
// parseStringToDuration, copied below as argoCD): where Argo CD gets a
// sound value ours is the same; where Argo CD fails or wraps ours refuses.
func TestParseArgoCD(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		kind error
	}{
		{"30s", 30 * time.Second, nil},
		{"2m", 2 * time.Minute, nil},
		{"1h", time.Hour, nil},
		{"300", 300 * time.Second, nil},
		{"0", 0, nil},
		{"-1", -time.Second, nil}, // Argo CD reads it; the spec refuses the sign
		{"3000000h", 0, ErrRange},
		{"99999999999999999999", 0, ErrRange},
		{"9223372037", 0, ErrRange},
		{"9223372036", 9223372036 * time.Second, nil},
		{"5 minutes", 0, ErrSyntax},
	} {
		got, err := ParseArgoCD(c.in)
		if !errors.Is(err, c.kind) || (c.kind == nil && err != nil) || got != c.want {
			t.Errorf("ParseArgoCD(%q) = %v, %v; want %v, %v", c.in, got, err, c.want, c.kind)
		}
		argo, argoErr := argoCD(c.in)
		switch {
		case err == nil && (argoErr != nil || argo != got):
			t.Errorf("%q: we read %v, Argo CD %v (%v)", c.in, got, argo, argoErr)
		case err != nil && argoErr == nil && !(c.in[0] != '-' && argo < 0): // refused, yet Argo CD reads it unwrapped
			t.Errorf("%q: we refuse (%v), Argo CD reads %v", c.in, err, argo)
		}
	}
}

// argoCD is Argo CD's parseStringToDuration (application/v1alpha1 types.go).
func argoCD(s string) (time.Duration, error) {
	if val, err := strconv.Atoi(s); err == nil {
		return time.Duration(val) * time.Second, nil
	}
	return time.ParseDuration(s)
}

func TestArgoCDWrapsWhereWeRefuse(t *testing.T) {
	if d, err := argoCD("9223372037"); err != nil || d >= 0 {
		t.Fatalf("Argo CD's parse of 9223372037 = %v, %v; the test assumes it wraps negative", d, err)
	}
}

func TestSum(t *testing.T) {
	if d, err := Sum(5*time.Minute, 5*time.Minute, 2*time.Minute); err != nil || d != 12*time.Minute {
		t.Fatalf("Sum = %v, %v", d, err)
	}
	big := 2562047 * time.Hour
	_, err := Sum(big, big)
	var oe *OverflowError
	if !errors.As(err, &oe) {
		t.Fatalf("Sum(%v, %v): %v, want an overflow", big, big, err)
	}
	if _, err := Sum(Max, 1); err == nil {
		t.Fatal("Max + 1 passed")
	}
	if _, err := Sum(-Max-1, -1); err == nil {
		t.Fatal("min - 1 passed")
	}
	if d, err := Sum(Max, -Max); err != nil || d != 0 {
		t.Fatalf("Max - Max = %v, %v", d, err)
	}
}

func TestFlag(t *testing.T) {
	var d time.Duration
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.Var(Flag{&d}, "t", "")
	if err := fs.Parse([]string{"-t", "90s"}); err != nil || d != 90*time.Second {
		t.Fatalf("-t 90s: %v, %v", d, err)
	}
	if err := fs.Parse([]string{"-t", "3000000h"}); err == nil {
		t.Fatal("-t 3000000h accepted")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
