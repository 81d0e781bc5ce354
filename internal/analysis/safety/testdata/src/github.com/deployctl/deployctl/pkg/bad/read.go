package bad

import (
	"bytes"
	"compress/gzip"
	stdio "io"
	"io/ioutil"
	"os"
)

func reads(r stdio.Reader) {
	_, _ = stdio.ReadAll(r)     // want `io.ReadAll reads without a bound: use internal/readlimit`
	_, _ = os.ReadFile("x")     // want `os.ReadFile reads without a bound: use internal/readlimit`
	_, _ = ioutil.ReadAll(r)    // want `ioutil.ReadAll reads without a bound`
	_, _ = ioutil.ReadFile("x") // want `ioutil.ReadFile reads without a bound`
	readAll := stdio.ReadAll    // want `io.ReadAll reads without a bound`
	_, _ = readAll(r)
	_, _ = use(os.ReadFile)  // want `os.ReadFile reads without a bound`
	_, _ = gzip.NewReader(r) // want `gzip.NewReader reads without a bound`

	// Not the pattern: bounded or not a read of everything.
	_, _ = stdio.ReadFull(r, make([]byte, 8))
	_, _ = stdio.Copy(new(bytes.Buffer), stdio.LimitReader(r, 10))
	_, _ = os.Open("x")
}

func use(f func(string) ([]byte, error)) ([]byte, error) { return f("y") }
