package redact

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deployctl/deployctl/internal/safehttp/safehttptest"
)

// A body echoing the token is masked before it is cut: no piece of the
// token of 4 characters or more survives, wherever the cut falls.
func TestSnippetRedactsBeforeClipping(t *testing.T) {
	const token = "0123456789abcdefghij0123456789ABCDEFGHIJ" // 40 characters
	for pad := range 40 {
		body := strings.Repeat("x", 280+pad) + " your token " + token + " is not valid"
		got := Snippet(body, 303, token)
		if len(got) > 303 {
			t.Fatalf("pad %d: %d bytes", pad, len(got))
		}
		safehttptest.NoPieceOf(t, token, got)
	}
}

// Never a cut inside a character, whatever the limit, and never over it.
func TestSnippetRuneBoundary(t *testing.T) {
	s := strings.Repeat("é漢🙂", 50)
	for n := 0; n < len(s)+2; n++ {
		got := Snippet(s, n)
		if len(got) > n || !utf8.ValidString(got) {
			t.Fatalf("limit %d: %d bytes, valid %v", n, len(got), utf8.ValidString(got))
		}
		if n >= len(s) && got != s {
			t.Fatalf("limit %d: %q cut although it fits", n, got)
		}
	}
	if got := Snippet("ab\xffcd", 100); !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8 kept: %q", got)
	}
}
