package aggregate

import (
	"testing"

	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

func TestVerdict(t *testing.T) {
	for health, want := range map[appstatus.Health]string{
		"Healthy": Healthy, "Progressing": Progressing, "": Progressing,
		"Degraded": Degraded, "Missing": Degraded, "Unknown": Degraded, "Suspended": Degraded,
	} {
		if got := Verdict(health); got != want {
			t.Errorf("Verdict(%q) = %s, want %s", health, got, want)
		}
	}
}

func TestWorst(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{[]string{Healthy, Healthy}, Healthy},
		{[]string{Healthy, Progressing, Healthy}, Progressing},
		{[]string{Progressing, Degraded, Progressing}, Degraded},
		{[]string{Degraded, Failed, Progressing}, Failed},
		{[]string{Healthy, "bogus"}, "bogus"},
	}
	for _, c := range cases {
		got := Healthy
		for _, v := range c.in {
			got = Worst(got, v)
		}
		if got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}
