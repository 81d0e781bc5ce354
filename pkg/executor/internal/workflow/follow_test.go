package workflow

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"

	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate/livestatetest"
)

// Following a finished run prints each shown task's state once (its step's
// message for a failure, "not run" for an omitted one) and reads nothing.
func TestFollowAFinishedRun(t *testing.T) {
	w := livestatetest.FailedDeploy(t)
	wfs := wffake.NewSimpleClientset()
	var out bytes.Buffer
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	got, err := Follow(context.Background(), &kube.Clients{Workflows: wfs}, w, Watch{
		Show: []string{"cert-manager", "database", "web"}, Out: &out, Log: quiet,
		NodeLog: func(string) *slog.Logger { return quiet }, OnReadError: func() { t.Error("no read expected") },
	})
	if err != nil || got != w {
		t.Fatalf("Follow: %v", err)
	}
	text := out.String()
	for _, want := range []string{"cert-manager                 Succeeded", "database                     Failed", "web                          Omitted", "not run: a node it depends on did not succeed"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "ingress-nginx") || strings.Count(text, "\n") != 3 {
		t.Errorf("want one line per shown task:\n%s", text)
	}
	if len(wfs.Actions()) != 0 {
		t.Errorf("a finished run is not read again: %v", wfs.Actions())
	}
}
