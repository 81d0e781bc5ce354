package safehttp

import (
	"net/http"
	"strings"
	"testing"
)

func TestCheckBearerToken(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJqdGkiOiIxIn0.c2lnbmF0dXJl"
	for _, ok := range []string{jwt, "a", "abc==", "A-._~+/z9=", strings.Repeat("f", 64)} {
		if err := CheckBearerToken(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
		// What it accepts, Go's client sends as written.
		req, _ := http.NewRequest("GET", "http://x/", nil)
		req.Header.Set("Authorization", "Bearer "+ok)
		if got := req.Header.Get("Authorization"); got != "Bearer "+ok {
			t.Errorf("%q: header %q", ok, got)
		}
	}
	for _, bad := range []string{"", "=", "=abc", "ab=c", "two words", "line\nbreak", "tab\t", " lead", "trail ", "caf\u00e9", "nul\x00", "a;b", "a\"b"} {
		err := CheckBearerToken(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if len(bad) > 2 && strings.Contains(err.Error(), bad) {
			t.Errorf("%q: the error shows the token: %v", bad, err)
		}
	}
}
