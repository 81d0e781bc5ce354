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
	// scheme://userinfo@host — userinfo is everything up to the last @ of
	// the authority (a password may hold an unescaped @), with no / ? # or
	// whitespace in it.
	userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s"']+@`)
	// Authorization: Bearer x / Basic x, also JSON-escaped or lower-case.
	authHeader = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+|%20|\\u0020)[A-Za-z0-9\-._~+/=:]{4,}`)
	// Common shapes of a credential echoed in a body: a JSON member
	// ("token": "…", "access_token": "…"), a query or form parameter
	// (token=…), a YAML line (token: …, as in an echoed kubeconfig). An
	// unquoted "token: words" inside a sentence is not one of them.
	credKey    = `(?:access_?token|id_?token|refresh_?token|token|password|passwd|client_?secret|api_?key|secret_?key)`
	tokenJSON  = regexp.MustCompile(`(?i)("[A-Za-z0-9_.\-]*` + credKey + `"\s*:\s*")([^"\\]{4,})`)
	tokenParam = regexp.MustCompile(`(?i)((?:^|[^A-Za-z0-9_])` + credKey + `=)([^&\s"',;]{4,})`)
	tokenYAML  = regexp.MustCompile(`(?im)^(\s*(?:-\s+)?(?:` + credKey + `|[a-z\-]*(?:client-key-data|id-token|refresh-token|client-secret)):[ \t]+)("?)([^\s"]{4,})`)
	// A PEM private key (a client key data, a TLS key) anywhere in text.
	privateKey = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END ([A-Z0-9 ]*)PRIVATE KEY-----`)
)

// String returns s with credentials replaced by Mask. Each of secrets
// (exact values such as a token read from a file) is masked as well;
// values shorter than 4 characters are ignored.
func String(s string, secrets ...string) string {
	for _, v := range secrets {
		if len(strings.TrimSpace(v)) >= 4 {
			s = strings.ReplaceAll(s, v, Mask)
		}
		if v = strings.TrimSpace(v); len(v) >= 4 {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	s = privateKey.ReplaceAllString(s, "-----BEGIN ${1}PRIVATE KEY-----"+Mask+"-----END ${2}PRIVATE KEY-----")
	s = userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	s = authHeader.ReplaceAllString(s, "${1} "+Mask)
	s = tokenJSON.ReplaceAllString(s, "${1}"+Mask)
	s = tokenParam.ReplaceAllString(s, "${1}"+Mask)
	s = tokenYAML.ReplaceAllString(s, "${1}${2}"+Mask)
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
