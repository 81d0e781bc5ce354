package preflight

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

func pod(images ...string) corev1.Pod {
	var p corev1.Pod
	for _, i := range images {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Image: i})
	}
	return p
}

func TestImageVersion(t *testing.T) {
	for _, tc := range []struct {
		pods []corev1.Pod
		want string
	}{
		{[]corev1.Pod{pod("quay.io/argoproj/argocd:v3.6.1")}, "v3.6.1"},
		{[]corev1.Pod{pod("registry:5000/mirror/argocd:v3.0.23@sha256:abcd")}, "v3.0.23"},
		{[]corev1.Pod{pod("sidecar:v1.0", "quay.io/argoproj/workflow-controller:v4.0.7")}, ""}, // not argocd
		{[]corev1.Pod{pod("quay.io/argoproj/argocd:latest"), pod("argocd:v3.4.2")}, "v3.4.2"},
		{[]corev1.Pod{pod("quay.io/argoproj/argocd@sha256:abcd")}, ""},
		{[]corev1.Pod{pod("quay.io/argoproj/argocd-extension:v1.2")}, ""},
		{nil, ""},
	} {
		if got := imageVersion(tc.pods, "argocd"); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.pods, got, tc.want)
		}
	}
}

func TestSupport(t *testing.T) {
	for _, tc := range []struct {
		product, version string
		ok               bool
		note             string
	}{
		{"Argo CD", "v3.6.1", true, "line v3.6 tested with v3.6.1"},
		{"Argo CD", "v3.0.30", true, "line v3.0 tested with v3.0.23"},
		{"Argo CD", "v3.4.2", false, "Argo CD v3.4.2 is untested: deployctl's e2e runs v3.0.23 (v3.0), v3.6.1 (v3.6)"},
		{"Argo Workflows", "v4.0.7", true, "tested with v4.0.7"},
		{"Argo Workflows", "v3.6.18", false, "plain `argo retry` hangs"},
		{"Argo Workflows", "v4.1.0", false, "untested"},
		{"Argo Workflows", "", true, "version unknown"},
	} {
		ok, note := support(tc.product, tc.version)
		if ok != tc.ok || !strings.Contains(note, tc.note) {
			t.Errorf("%s %s: %v %q, want %v and %q", tc.product, tc.version, ok, note, tc.ok, tc.note)
		}
	}
}

func TestNoteSupport(t *testing.T) {
	c := report.Check{Status: report.Pass, Reason: "workflow-controller 1/1 Ready"}
	noteSupport(&c, "Argo Workflows", "v3.6.18")
	if c.Status != report.Warn || !strings.HasPrefix(c.Reason, "Argo Workflows v3.6.18 is untested") || !strings.HasSuffix(c.Reason, "1/1 Ready") {
		t.Errorf("untested: %+v", c)
	}
	c = report.Check{Status: report.Pass, Reason: "Ready"}
	noteSupport(&c, "Argo CD", "v3.6.1")
	if c.Status != report.Pass || c.Reason != "Ready; Argo CD v3.6.1 (line v3.6 tested with v3.6.1)" {
		t.Errorf("tested: %+v", c)
	}
}

// An app's Argo CD 3 field that the running Argo CD does not know fails
// the check (it would be dropped without a word), naming field, release
// and apps; an unknown release warns; a release that knows them passes.
func TestNewerFields(t *testing.T) {
	off := false
	p := &spec.Platform{}
	p.Spec.Stacks = []spec.Stack{{Name: "s", Apps: []spec.App{
		{Name: "a", Source: &spec.Source{TagPrefix: "a/"}, SyncPolicy: &spec.SyncPolicy{Automated: &spec.Automated{Enabled: &off}}},
		{Name: "b", Sources: []spec.Source{{TagPrefix: "b/"}, {TagPrefix: "c/"}}},
		{Name: "c", Source: &spec.Source{Path: "c"}},
	}}}
	for _, tc := range []struct {
		version, status string
		reason          []string
	}{
		{"v3.6.1", report.Pass, nil},
		{"v3.5.0", report.Pass, nil},
		{"v3.4.2", report.Fail, []string{"Argo CD v3.4.2 does not know", "spec.source.tagPrefix (v3.5+): a", "spec.sources[0].tagPrefix (v3.5+): b", "spec.sources[1].tagPrefix (v3.5+): b"}},
		{"v3.0.23", report.Fail, []string{"spec.syncPolicy.automated.enabled (v3.1+): a", "becomes an automated sync"}},
		{"", report.Warn, []string{"release is unknown", "spec.syncPolicy.automated.enabled (v3.1+): a"}},
	} {
		c := report.Check{Name: "argo-cd", Status: report.Pass, Reason: "Ready"}
		newerFields(&c, p, tc.version)
		if c.Status != tc.status {
			t.Errorf("%q: %s (%s), want %s", tc.version, c.Status, c.Reason, tc.status)
		}
		for _, w := range tc.reason {
			if !strings.Contains(c.Reason, w) {
				t.Errorf("%q: no %q in %s", tc.version, w, c.Reason)
			}
		}
		if tc.status == report.Fail && c.Code != exitcode.Invalid {
			t.Errorf("%q: code %d", tc.version, c.Code)
		}
		if tc.version == "v3.0.23" && strings.Contains(c.Reason, "v3.4.2") {
			t.Error(c.Reason)
		}
	}
}
