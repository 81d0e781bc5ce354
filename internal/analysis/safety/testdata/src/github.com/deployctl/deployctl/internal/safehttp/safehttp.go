// Package safehttp owns the HTTP client.
package safehttp

import "net/http"

func New() *http.Client { return &http.Client{Transport: http.DefaultTransport} }
