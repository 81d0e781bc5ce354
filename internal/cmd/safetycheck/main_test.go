package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		code     int
		stdout   string
		stderr   string
	}{
		{[]string{"./pkg/a", "./pkg/clean"}, 1, `pkg/a/a.go:8:49: io.ReadAll reads without a bound: use internal/readlimit (bounded, refuses non-regular files; Gunzip decompresses bounded)
pkg/a/a.go:14:42: msg[:300] clips a message by hand (a cut made before masking leaks a credential's prefix): use internal/redact's Clip (masks, then cuts on a rune boundary)
allowed: pkg/a/a.go:11:9: remove: dir is a temporary folder Clean's caller made
safetycheck: 2 finding(s): use the sanctioned package named, or keep the line with //safety:allow <pattern> <reason>
`, ""},
		{[]string{"./pkg/clean"}, 0, "", ""},
		{[]string{"./pkg/broken"}, 2, "", "broken.go:3:28: cannot use"},
	} {
		var stdout, stderr bytes.Buffer
		code := run("testdata/mod", c.patterns, &stdout, &stderr)
		if code != c.code || stdout.String() != c.stdout || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("safetycheck %s: exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s(want it to contain %q)",
				c.patterns, code, c.code, &stdout, c.stdout, &stderr, c.stderr)
		}
	}
}
