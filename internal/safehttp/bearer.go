package safehttp

import (
	"fmt"
	"strings"

	"github.com/deployctl/deployctl/internal/readlimit"
)

// CheckBearerToken is RFC 6750's b64token, the syntax of a bearer token in
// an Authorization header: letters, digits, "-._~+/", then "=" padding.
// A token read from a file that is not one (a space, a second line, a
// control or non-ASCII character) can never be sent as written: Go's
// client refuses some, and a server that compares the header it parsed
// (Argo Events' webhook, Argo CD) never matches the rest. The error names
// the rule and the offending position, never the token.
func CheckBearerToken(tok string) error {
	if tok == "" {
		return fmt.Errorf("is empty")
	}
	pad := false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c == '=':
			pad = true
		case pad:
			return fmt.Errorf("not a bearer token (RFC 6750: letters, digits, -._~+/ then = padding): a character after \"=\" at byte %d", i+1)
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return fmt.Errorf("not a bearer token (RFC 6750: letters, digits, -._~+/ then = padding): byte %d is not one of those", i+1)
		}
	}
	if tok[0] == '=' {
		return fmt.Errorf("not a bearer token (RFC 6750): it starts with \"=\"")
	}
	return nil
}

// ReadBearerToken reads a token file (a mounted Secret's key; at most
// readlimit.Secret), without the surrounding white space a Secret made
// with an editor or `echo` carries, and checks it with CheckBearerToken.
// Every bearer token deployctl and deploystep send is read here.
func ReadBearerToken(path string) (string, error) {
	b, err := readlimit.ReadFile(path, readlimit.Secret)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if err := CheckBearerToken(tok); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return tok, nil
}
