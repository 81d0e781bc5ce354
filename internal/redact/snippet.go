package redact

import (
	"strings"
	"unicode/utf8"
)

// Snippet is the one way a text of unknown content (an error body, a log
// line, a step's summary) becomes a message of at most limit bytes: first
// redacted whole (String, with secrets), then cut at a character boundary
// with "…". In this order, a credential is masked before any cut could
// leave a prefix of it that no pattern recognises. Invalid UTF-8 is
// replaced, so a cut never leaves half a character either.
func Snippet(text string, limit int, secrets ...string) string {
	return clip(strings.ToValidUTF8(String(text, secrets...), "\uFFFD"), limit)
}

// clip cuts s to at most n bytes, ending in "…", at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	if n < len(ellipsis) {
		return ""
	}
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
