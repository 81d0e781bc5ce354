package redact

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://bob:ghp_abc123@github.com/x/y.git", "https://REDACTED@github.com/x/y.git"},
		{"clone https://oauth2:tok@git.example.com/p and ssh://git@host/x", "clone https://REDACTED@git.example.com/p and ssh://REDACTED@host/x"},
		{`{"headers":{"Authorization":"Bearer eyJhbGciOi.J9.abc"}}`, `{"headers":{"Authorization":"Bearer REDACTED"}}`},
		{"authorization: basic dXNlcjpwYXNz", "authorization: basic REDACTED"},
		{`{"token":"s3cr3t-value"}`, `{"token":"REDACTED"}`},
		{"password=hunter22&x=1", "password=REDACTED&x=1"},
		{"nothing to hide: https://example.com/a@b", "nothing to hide: https://example.com/a@b"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestKnownSecret(t *testing.T) {
	got := String("server said: token is 0123456789abcdef\n", "0123456789abcdef\n")
	if strings.Contains(got, "0123456789abcdef") {
		t.Fatal(got)
	}
}

func TestURL(t *testing.T) {
	if got := URL("https://u:p@h/x"); got != "https://REDACTED@h/x" {
		t.Fatal(got)
	}
	if got := URL("https://h/x"); got != "https://h/x" {
		t.Fatal(got)
	}
}
