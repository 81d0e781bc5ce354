package step

import (
	"os"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

// An app with its own applicationNamespace: the compiler writes the
// namespace into the manifest and passes the same as --app-namespace
// (ARGOCD_APP_NAMESPACE); the step addresses the Application there. A
// manifest and a flag that disagree are a usage error, nothing is created.
func TestSyncAndWaitInAppNamespace(t *testing.T) {
	t.Parallel()
	manifest := writeManifest(t, "web-app")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(data), `"namespace": "argocd"`, `"namespace": "team-a"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeArgo(t, scenario{after: hs(progressing, healthy)})
	o := syncAndWait(t, f, "--manifest", manifest, "--app-namespace", "team-a")
	expect(t, o, exitcode.OK)
	if o.str("appNamespace") != "team-a" || f.count("create") != 1 {
		t.Errorf("appNamespace %q, creates %d", o.str("appNamespace"), f.count("create"))
	}
	f2 := newFakeArgo(t, scenario{after: hs(progressing, healthy)})
	o = syncAndWait(t, f2, "--manifest", manifest, "--app-namespace", "argocd")
	expect(t, o, exitcode.Invalid, `the manifest's namespace "team-a" differs from --app-namespace "argocd"`)
	if f2.count("create") != 0 {
		t.Errorf("created despite the disagreement")
	}
}
