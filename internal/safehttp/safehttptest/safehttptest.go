// Package safehttptest is what the tests of every HTTP client use to play
// a hostile server: a gzip bomb, and the check that no piece of a secret
// reached a message.
package safehttptest

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// GzipBomb is prefix, mib MiB of 'a', then suffix, gzip-compressed (about
// 1 KiB per MiB).
func GzipBomb(prefix string, mib int, suffix string) []byte {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write([]byte(prefix))
	pad := bytes.Repeat([]byte("a"), 1<<20)
	for range mib {
		zw.Write(pad)
	}
	zw.Write([]byte(suffix))
	zw.Close()
	return z.Bytes()
}

// GzipServer answers every request with body, sent as gzip content.
func GzipServer(t testing.TB, body []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// NoPieceOf fails the test when msg holds any 4 characters in a row of
// secret: a clipped or partly masked secret is still a leak.
func NoPieceOf(t testing.TB, secret, msg string) {
	t.Helper()
	for i := 0; i+4 <= len(secret); i++ {
		if strings.Contains(msg, secret[i:i+4]) {
			t.Fatalf("%q of the secret is in %q", secret[i:i+4], msg)
		}
	}
}
