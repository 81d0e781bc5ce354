// Package redact removes credentials from text before it is written anywhere
// a person or a log collector can read it: user:password@ in URLs, bearer and
// basic credentials a server echoed back, and known secret values.
// Standard library only, so the in-step binary can use it.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces what is removed.
const Mask = "REDACTED"

var (
	// scheme://userinfo@host — userinfo is everything up to the last @ before
	// the host part, with no / ? # or whitespace in it.
	userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s@"']+@`)
	// Authorization: Bearer x / Basic x, also JSON-escaped or lower-case.
	authHeader = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+|%20|\\u0020)[A-Za-z0-9\-._~+/=:]{4,}`)
	// "token": "…", token=… — common shapes of a token echoed in a body.
	tokenField = regexp.MustCompile(`(?i)("?(?:access_?token|id_?token|refresh_?token|token|password|client_?secret)"?\s*[:=]\s*"?)([^"\s,&}]{4,})`)
)

// String returns s with credentials replaced by Mask. Each of secrets
// (exact values such as a token read from a file) is masked as well;
// values shorter than 4 characters are ignored.
func String(s string, secrets ...string) string {
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	s = userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	s = authHeader.ReplaceAllString(s, "${1} "+Mask)
	s = tokenField.ReplaceAllString(s, "${1}"+Mask)
	return s
}

// URL returns raw with any user information replaced by Mask; a value that
// does not parse is passed through String.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return String(raw)
	}
	u.User = url.User(Mask)
	return u.String()
}
