package plugin

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

func TestServeFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := serve(context.Background(), nil, []string{"-h"}, &out, &errOut, nil); code != exitcode.OK || !strings.Contains(out.String(), "--token-file") {
		t.Errorf("-h: exit %d, %q", code, out.String())
	}
	for _, args := range [][]string{{"--port", "1"}, {"extra"}, {"--requeue", "0s"}, {"--token-file", filepath.Join(t.TempDir(), "none")}} {
		errOut.Reset()
		if code := serve(context.Background(), nil, args, io.Discard, &errOut, nil); code != exitcode.Invalid {
			t.Errorf("%v: exit %d, want 3 (%s)", args, code, errOut.String())
		}
	}
	empty := filepath.Join(t.TempDir(), "token")
	os.WriteFile(empty, []byte("\n"), 0o600)
	errOut.Reset()
	if code := serve(context.Background(), nil, []string{"--token-file", empty}, io.Discard, &errOut, nil); code != exitcode.Invalid || !strings.Contains(errOut.String(), "agent's token") || !strings.Contains(errOut.String(), "empty") {
		t.Errorf("empty token: exit %d, %s", code, errOut.String())
	}
	// Two lines: not a token any Authorization header can carry.
	os.WriteFile(empty, []byte("s3cret\nx-other: 1\n"), 0o600)
	errOut.Reset()
	if code := serve(context.Background(), nil, []string{"--token-file", empty}, io.Discard, &errOut, nil); code != exitcode.Invalid || !strings.Contains(errOut.String(), "RFC 6750") || strings.Contains(errOut.String(), "s3cret") {
		t.Errorf("two-line token: exit %d, %s", code, errOut.String())
	}
}

// The real listener: it answers the agent; after SIGTERM (ctx) it answers
// on until killed, then exits 0.
func TestServeListensAndStops(t *testing.T) {
	killed := make(chan struct{})
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(agentToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan int, 1)
	var logs bytes.Buffer
	go func() {
		done <- serve(ctx, killed, []string{"--listen", "127.0.0.1:0", "--token-file", tok}, io.Discard, &logs, func(a string) { addr <- a })
	}()
	url := "http://" + <-addr + executePath
	body := `{"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"u"}},"template":{"name":"t","plugin":{"slack":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+agentToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(got)) != "{}" {
		t.Errorf("HTTP %d %q, want 200 {}", resp.StatusCode, got)
	}
	cancel()
	// Stopping, it still answers until it is killed.
	req, _ = http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+agentToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("a call right after SIGTERM: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	close(killed)
	if code := <-done; code != exitcode.OK {
		t.Errorf("exit %d after SIGTERM", code)
	}
	if !strings.Contains(logs.String(), "stopped") {
		t.Errorf("log %q", logs.String())
	}
}
