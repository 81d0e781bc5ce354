package stepresult

import (
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

func TestParseRefusesWhatIsNotAResult(t *testing.T) {
	for _, in := range []string{``, `not json`, `{}`, `{"message":"no command"}`, `[1]`} {
		if r, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, r)
		}
	}
	r, err := Parse([]byte(`{"command":"validate","outcome":"Partial","exitCode":2,"message":"1 Degraded","aggregate":"Degraded"}`))
	if err != nil || r.Command != "validate" || r.ExitCode != exitcode.Partial {
		t.Errorf("Parse: %+v, %v", r, err)
	}
	if h := r.Headline(); h != "step validate exit 2 (Partial): 1 Degraded" {
		t.Errorf("headline %q", h)
	}
	if (*Result)(nil).Headline() != "" || (*Result)(nil).Diagnostics() != nil {
		t.Error("a missing result has nothing to say")
	}
}

func TestOutcome(t *testing.T) {
	for code, want := range map[int]string{0: "Succeeded", 1: "Failed", 2: "Partial", 3: "InvalidArguments", 4: "Timeout", 75: "Transient", 9: "Failed"} {
		if got := Outcome(code); got != want {
			t.Errorf("Outcome(%d) = %q, want %q", code, got, want)
		}
	}
}
