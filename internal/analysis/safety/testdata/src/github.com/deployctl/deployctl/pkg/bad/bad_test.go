package bad

import (
	"io"
	"net/http"
	"os"
	"testing"
)

// Test files are not checked: none of these is a finding.
func TestPatterns(t *testing.T) {
	_, _ = io.ReadAll(nil)
	_ = os.RemoveAll(t.TempDir())
	_ = &http.Client{}
	msg := "x"
	_ = msg[:1]
}
