package bad

import (
	"net/http"
	"time"
)

type holder struct {
	hc  http.Client // want `a field of type http.Client makes an HTTP client outside the shared policy: use internal/safehttp`
	ref *http.Client
}

var zero http.Client // want `a variable of type http.Client makes an HTTP client`

func clients(given *http.Client) {
	_ = &http.Client{Timeout: time.Second} // want `http.Client{…} makes an HTTP client outside the shared policy: use internal/safehttp`
	_ = http.Client{}                      // want `http.Client{} makes an HTTP client`
	_ = new(http.Client)                   // want `new\(http.Client\) makes an HTTP client`
	_ = []http.Client{{}}                  // want `http.Client{} makes an HTTP client`
	_ = &http.Transport{}                  // want `http.Transport{} makes an HTTP client`
	_ = http.DefaultClient                 // want `http.DefaultClient makes an HTTP client`
	_ = http.DefaultTransport              // want `http.DefaultTransport makes an HTTP client`
	_, _ = http.Get("http://x")            // want `http.Get makes an HTTP client`
	_, _ = http.Head("http://x")           // want `http.Head makes an HTTP client`
	_, _ = http.Post("http://x", "", nil)  // want `http.Post makes an HTTP client`
	_, _ = http.PostForm("http://x", nil)  // want `http.PostForm makes an HTTP client`
	_ = http.DefaultClient.Do              // want `http.DefaultClient makes an HTTP client`

	// Not the pattern: a client made elsewhere, passed in or held by pointer.
	var c *http.Client = given
	req, _ := http.NewRequest(http.MethodGet, "http://x", nil)
	_, _ = c.Do(req)
	_ = holder{ref: given}.ref
}
