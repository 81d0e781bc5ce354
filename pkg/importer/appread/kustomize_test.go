package appread

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deployctl/deployctl/internal/fssnap"
)

const service = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"

// noNetwork makes any attempt to reach what a file names visible: git on
// PATH is a script that leaves a mark, temporary folders (where Kustomize
// clones) go to an empty folder, and the returned server counts requests.
func noNetwork(t *testing.T) (mark, tmp string, hits *atomic.Int64, srv *httptest.Server) {
	t.Helper()
	bin := t.TempDir()
	mark = filepath.Join(t.TempDir(), "git-ran")
	script := "#!/bin/sh\necho \"$@\" >> " + mark + "\nexit 1\n"
	for _, name := range []string{"git", "ssh"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	t.Setenv("GIT_SSH_COMMAND", filepath.Join(bin, "ssh"))
	tmp = t.TempDir()
	t.Setenv("TMPDIR", tmp)
	hits = &atomic.Int64{}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, service)
	}))
	t.Cleanup(srv.Close)
	return mark, tmp, hits, srv
}

// Issue 22: every remote form Kustomize documents (examples/remoteBuild.md
// and its repospec tests), and a local folder Kustomize would take for a
// repository, is refused with the exact entry before Kustomize runs:
// no git, no ssh, no HTTP request, nothing written.
func TestKustomizeRemoteFormsRefused(t *testing.T) {
	mark, tmp, hits, srv := noNetwork(t)
	forms := []string{
		"deploy@127.0.0.1:org/repo.git", // scp-style: git fetch over ssh
		"GitHub.com/org/repo",
		"github.com/kubernetes-sigs/kustomize//examples/multibases?ref=v1.0.6",
		"github.com:org/repo",
		"git::https://itfs.mycompany.com/collection/project/_git/somerepos",
		"git::" + srv.URL + "/org/repo.git",
		"GIT::HTTPS://example.org/org/repo.git",
		"https://github.com/kubernetes-sigs/kustomize//examples/multibases/dev/?timeout=120&ref=v3.3.1",
		"http://github.com/someorg/somerepo/somedir",
		srv.URL + "/service.yaml", // a remote file, over HTTP
		"HTTPS://raw.githubusercontent.com/kubernetes-sigs/kustomize/master/examples/helloWorld/deployment.yaml",
		"git@github.com:someorg/somerepo.git/somedir",
		"git@bitbucket.org/company/project.git//path?ref=branch",
		"ssh://git@bitbucket.org/company/project.git//path?ref=branch",
		"ssh://git@ssh.github.com:443/YOUR-USERNAME/YOUR-REPOSITORY.git",
		"org-12345@github.com/kubernetes-sigs/kustomize",
		"https://username@dev.azure.com/org/project/_git/repo//path/to/kustomization/root",
		"file:///a/b/c/someRepo//somepath?ref=someBranch",
		"file://" + tmp + "/repo.git",
		"gh:org/repo",
		"github.com/local/folder", // exists below: Kustomize would still clone it
	}
	dir := t.TempDir()
	files := map[string]string{"github.com/local/folder/kustomization.yaml": "resources: [s.yaml]\n", "github.com/local/folder/s.yaml": service}
	var k strings.Builder
	k.WriteString("resources:\n")
	for _, f := range forms {
		fmt.Fprintf(&k, "- %q\n", f)
	}
	// The same forms where Kustomize loads files.
	k.WriteString("components: [\"git@github.com:org/component.git\"]\n")
	k.WriteString("patches:\n- path: " + srv.URL + "/patch.yaml\n")
	k.WriteString("crds: [\"https://example.org/crd.yaml\"]\n")
	k.WriteString("configMapGenerator:\n- name: c\n  files: [\"key=" + srv.URL + "/file\"]\n  envs: [\"https://example.org/env\"]\n")
	k.WriteString("replacements:\n- path: https://example.org/replacement.yaml\n")
	k.WriteString("openapi:\n  path: https://example.org/schema.json\n")
	k.WriteString("generators: [\"ssh://git@example.org/org/generator.git\"]\n")
	files["app/kustomization.yaml"] = k.String()
	write(t, dir, files)
	before := fssnap.Take(t, dir)

	_, err := Read([]string{filepath.Join(dir, "app")})
	if err == nil {
		t.Fatal("read")
	}
	for _, f := range append(forms, "git@github.com:org/component.git", srv.URL+"/patch.yaml", "https://example.org/crd.yaml",
		srv.URL+"/file", "https://example.org/env", "https://example.org/replacement.yaml", "https://example.org/schema.json",
		"ssh://git@example.org/org/generator.git") {
		if !strings.Contains(err.Error(), fmt.Sprintf("%s/app/kustomization.yaml: ", dir)) ||
			!strings.Contains(err.Error(), fmt.Sprintf(": %q: not a local path (Kustomize reads it as a URL or a Git repository)", f)) {
			t.Errorf("%s: not refused as remote:\n%v", f, err)
		}
	}
	if strings.Contains(err.Error(), "kustomize build:") {
		t.Errorf("Kustomize ran:\n%v", err)
	}
	if data, err := os.ReadFile(mark); err == nil {
		t.Errorf("git or ssh ran: %s", data)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d HTTP requests", n)
	}
	fssnap.Same(t, before, fssnap.Take(t, dir))
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("written to the temporary folder: %v", entries)
	}
}

// A local path is accepted only as a regular file or folder inside the
// allowed root: not outside it (directly or through a link), not missing,
// not a named pipe (which would hang the import).
func TestKustomizeLocalPathsOnly(t *testing.T) {
	mark, _, hits, _ := noNetwork(t)
	outside := t.TempDir()
	write(t, outside, map[string]string{"base/kustomization.yaml": "resources: [s.yaml]\n", "base/s.yaml": service})
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"app/kustomization.yaml": "resources:\n- ../../" + filepath.Base(outside) + "/base\n- linked\n- missing.yaml\n- pipe.yaml\n- ok.yaml\n",
		"app/ok.yaml":            service,
	})
	if err := os.Symlink(filepath.Join(outside, "base"), filepath.Join(dir, "app", "linked")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "app", "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read([]string{dir}); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("import blocked on the named pipe")
	}
	k := dir + "/app/kustomization.yaml: resources: "
	for _, want := range []string{
		k + `"../../` + filepath.Base(outside) + `/base": outside ` + dir,
		k + `"linked": outside ` + dir,
		k + `"missing.yaml": no such file or folder`,
		k + `"pipe.yaml": a named pipe, not a file or folder`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in\n%v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), `"ok.yaml"`) {
		t.Errorf("a local file refused:\n%v", err)
	}
	if _, err := os.Stat(mark); err == nil || hits.Load() != 0 {
		t.Error("the network was reached")
	}
}

// A named pipe named *.yaml in an import folder is refused by its type,
// naming it, without opening it (opening it would wait for a writer).
func TestFolderWithNamedPipe(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"apps/ok.yaml": service})
	fifo := filepath.Join(dir, "apps", "hang.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	before := fssnap.Take(t, dir)
	done := make(chan error, 1)
	go func() { _, err := Read([]string{dir}); done <- err }()
	select {
	case err := <-done:
		if want := fifo + ": not a regular file (a named pipe)"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("import blocked on the named pipe")
	}
	fssnap.Same(t, before, fssnap.Take(t, dir))
}
