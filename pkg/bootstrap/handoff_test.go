package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/spec"
)

// argoCDHosts are the names Argo CD's argocd-server puts in the certificate
// it makes for itself when it has none (util/settings, v3.0 to v3.6).
func argoCDHosts(ns string) []string {
	return []string{"localhost", "argocd-server", "argocd-server." + ns, "argocd-server." + ns + ".svc", "argocd-server." + ns + ".svc.cluster.local"}
}

// certificate makes a PEM certificate for hosts, signed by parent (self-signed
// without one); ca makes it a CA.
func certificate(t *testing.T, cn string, ca bool, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, hosts ...string) (string, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn, Organization: []string{"Argo CD"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, DNSNames: hosts,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: ca,
	}
	if ca {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	must(t, err)
	c, err := x509.ParseCertificate(der)
	must(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), c, key
}

func selfSigned(t *testing.T, hosts ...string) string {
	t.Helper()
	p, _, _ := certificate(t, "", false, nil, nil, hosts...)
	return p
}

// privateCA returns a CA's PEM and a server certificate it issued for hosts.
func privateCA(t *testing.T, hosts ...string) (caPEM, leafPEM string) {
	t.Helper()
	caPEM, ca, key := certificate(t, "Example CA", true, nil, nil)
	leafPEM, _, _ = certificate(t, "argocd-server", false, ca, key, hosts...)
	return caPEM, leafPEM
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func unb64(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	must(t, err)
	return string(b)
}

// finishedDeploy is a deploy Workflow of p as the controller leaves it.
func finishedDeploy(p *spec.Platform, name, created, hash, phase string) fakeObject {
	o := object("Workflow", p.Spec.Workflow.Namespace, name, map[string]string{
		"deployctl.dev/platform": p.Metadata.Name, "deployctl.dev/action": "deploy", "deployctl.dev/spec-hash": hash,
	}, nil, map[string]any{"phase": phase})
	o.Metadata.CreationTimestamp = created
	return o
}

// application is an Argo CD Application of p ("namespace/name") with its health and sync.
func application(p *spec.Platform, nsName, health, sync string) fakeObject {
	ns, name, _ := strings.Cut(nsName, "/")
	return object("Application", ns, name, map[string]string{"deployctl.dev/platform": p.Metadata.Name},
		nil, map[string]any{"health": map[string]any{"status": health}, "sync": map[string]any{"status": sync}})
}

func withCA(t *testing.T) *spec.Platform {
	t.Helper()
	p := load(t, reference)
	p.Spec.ArgoCD.CASecret = &spec.SecretKeyRef{Name: "argocd-ca", Key: "bundle.pem"}
	return p
}

// handoffOnly makes the cluster hold the four releases and returns the
// extra variables that mark their roles done in this run, so that site.yml
// runs the handoff alone (each role skips itself when its status is
// success, as on a second pass in one run).
func handoffOnly(p *spec.Platform, fc *fakeCluster) []string {
	var extra []string
	for _, c := range components {
		chart := c.chart(&p.Spec.Bootstrap.Charts)
		ns := map[string]string{"argocd": p.Spec.ArgoCD.Namespace, "argo-workflows": p.Spec.Workflow.Namespace,
			"argo-events": EventsNamespace, "sealed-secrets": SealedSecretsNamespace}[c.Role]
		fc.Releases[ns+"/"+c.Release] = fakeRel{Name: c.Release, Namespace: ns, ChartName: chart.Chart,
			Chart: chart.Chart + "-" + chart.Version, Revision: 1, Status: "deployed", Values: map[string]any{}}
		extra = append(extra, "-e", varName(c.Role)+"_status=success")
	}
	return extra
}

func submitted(r bootstrapRun) []string {
	var out []string
	for key, o := range r.state.Objects {
		if strings.HasPrefix(key, "Workflow/") && o.Metadata.Labels["deployctl.dev/trigger"] == "bootstrap" {
			out = append(out, o.Metadata.Name)
		}
	}
	return out
}

// TestApplications: the handoff knows every Application of the platform,
// in its namespace, and the root one.
func TestApplications(t *testing.T) {
	p := load(t, reference)
	p.Spec.Stacks[0].Apps[0].ApplicationNamespace = "team-a"
	got := applications(p)
	n := 0
	for _, st := range p.Spec.Stacks {
		n += len(st.Apps)
	}
	first := p.Spec.Stacks[0].Apps[0].Name
	if len(got) != n+1 || !slices.Contains(got, "argocd/deployctl-root-reference-platform") || !slices.Contains(got, "team-a/"+first) || slices.Contains(got, "argocd/"+first) {
		t.Errorf("applications %v (%d apps)", got, n)
	}
	p.Spec.Bootstrap.RootApplication = nil
	if got := applications(p); len(got) != n || slices.Contains(got, "argocd/deployctl-root-reference-platform") {
		t.Errorf("without a root Application: %v", got)
	}
}

// TestNoCASecretNoCATasks: a spec without argocd.caSecret gets no CA tasks,
// no CA variable and no collection for them; with one, each is there, with
// the spec's names and the host of spec.argocd.server.
func TestNoCASecretNoCATasks(t *testing.T) {
	without := generate(t, load(t, reference))
	with := generate(t, withCA(t))
	for _, f := range []string{"roles/gitops-handoff/tasks/main.yml", "roles/gitops-handoff/defaults/main.yml", "inventories/production/group_vars/all.yml", "requirements.yml"} {
		for _, word := range []string{"caSecret", "ca_secret", "argocd_ca", "community.crypto"} {
			if strings.Contains(string(without[f]), word) {
				t.Errorf("without caSecret, %s mentions %s", f, word)
			}
		}
	}
	d := vars(t, with, "roles/gitops-handoff/defaults/main.yml")
	if d["gitops_handoff_ca_secret_name"] != "argocd-ca" || d["gitops_handoff_ca_secret_key"] != "bundle.pem" || d["gitops_handoff_argocd_host"] != "argocd-server.argocd.svc" {
		t.Errorf("CA defaults %v %v %v", d["gitops_handoff_ca_secret_name"], d["gitops_handoff_ca_secret_key"], d["gitops_handoff_argocd_host"])
	}
	if !strings.Contains(string(with["requirements.yml"]), "community.crypto") {
		t.Error("requirements.yml lacks community.crypto, whose filters parse the CA")
	}
	all := vars(t, with, "inventories/production/group_vars/all.yml")
	if all["deployctl_argocd_ca"] != "{{ vault_deployctl_argocd_ca | default('') }}" {
		t.Errorf("deployctl_argocd_ca = %v", all["deployctl_argocd_ca"])
	}
	p := withCA(t)
	p.Spec.ArgoCD.Server = "[fd00::1]:8443"
	if d := vars(t, generate(t, p), "roles/gitops-handoff/defaults/main.yml"); d["gitops_handoff_argocd_host"] != "fd00::1" {
		t.Errorf("host of [fd00::1]:8443 = %v", d["gitops_handoff_argocd_host"])
	}
}

// TestBootstrapRerunChangesNothing: the last deploy of this spec Succeeded
// (after an older one Failed) and every app is Healthy and Synced, so the
// handoff submits nothing and reports that run (README "run": nothing to
// do). The CA comes from argocd-server-tls's ca.crt, the CA that issued
// the certificate it serves, and the CA Secret deployctl wrote before
// already holds it: nothing is written.
func TestBootstrapRerunChangesNothing(t *testing.T) {
	t.Parallel()
	p := withCA(t)
	fc := newFakeCluster(p)
	caPEM, leaf := privateCA(t, "argocd-server.argocd.svc")
	fc.put(object("Secret", "argocd", "argocd-server-tls", nil, map[string]string{"ca.crt": b64(caPEM), "tls.crt": b64(leaf)}, nil))
	fc.put(object("Secret", "argocd", "argocd-secret", nil, map[string]string{"tls.crt": b64(selfSigned(t, argoCDHosts("argocd")...))}, nil))
	ours := map[string]string{"app.kubernetes.io/managed-by": "deployctl", "deployctl.dev/platform": p.Metadata.Name}
	fc.put(object("Secret", "argo", "argocd-ca", ours, map[string]string{"bundle.pem": b64(strings.TrimSpace(caPEM))}, nil))
	fc.put(object("Secret", "argo", p.Spec.ArgoCD.TokenSecret.Name, ours, map[string]string{p.Spec.ArgoCD.TokenSecret.Key: b64("s3cret-token")}, nil))
	fc.put(finishedDeploy(p, "e2e-b", "2029-01-02T00:00:00Z", fakeSpecHash, "Succeeded"))
	fc.put(finishedDeploy(p, "e2e-a", "2029-01-01T00:00:00Z", fakeSpecHash, "Failed"))
	for _, a := range applications(p) {
		fc.put(application(p, a, "Healthy", "Synced"))
	}
	r, _ := runSite(t, p, fc)
	if !r.ok {
		t.Fatalf("site.yml failed:\n%s", r.output)
	}
	handoff := r.reports[len(r.reports)-1]
	want := "the last run e2e-b of this spec Succeeded and all " + itoa(len(applications(p))) + " apps are Healthy and Synced"
	if handoff["status"] != "success" || handoff["decision"] != "up-to-date" || handoff["reason"] != want || handoff["spec_hash"] != fakeSpecHash ||
		handoff["workflow"] != "argo/e2e-b" || handoff["ca_secret"] != "argo/argocd-ca from Secret argocd-server-tls, ca.crt" {
		t.Errorf("handoff report %v", handoff)
	}
	if s := submitted(r); len(s) != 0 {
		t.Errorf("the re-run submitted %v", s)
	}
	for _, name := range []string{"argocd-ca", p.Spec.ArgoCD.TokenSecret.Name} {
		if o := r.state.Objects["Secret/argo/"+name]; o.Manager != "" {
			t.Errorf("Secret %s was written again: %+v", name, o)
		}
	}
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

// TestBootstrapFollowsTheRunningDeploy: a deploy of this spec is running, so
// the handoff follows it and submits none. The CA is the private one given
// as deployctl_argocd_ca (the certificate argocd-server serves chains to
// it), and replaces what deployctl wrote before.
func TestBootstrapFollowsTheRunningDeploy(t *testing.T) {
	t.Parallel()
	p := withCA(t)
	fc := newFakeCluster(p)
	caPEM, leaf := privateCA(t, "*.argocd.svc")
	fc.put(object("Secret", "argocd", "argocd-server-tls", nil, map[string]string{"tls.crt": b64(leaf)}, nil))
	ours := map[string]string{"app.kubernetes.io/managed-by": "deployctl"}
	old := object("Secret", "argo", "argocd-ca", ours, map[string]string{"bundle.pem": b64("old")}, nil)
	old.Manager = "deployctl" // the executor's field manager
	fc.put(old)
	fc.put(finishedDeploy(p, "e2e-running", "2029-01-02T00:00:00Z", fakeSpecHash, "Running"))
	given, err := json.Marshal(map[string]string{"deployctl_argocd_ca": caPEM})
	must(t, err)
	r, _ := runSite(t, p, fc, append(handoffOnly(p, fc), "-e", string(given))...)
	if !r.ok {
		t.Fatalf("site.yml failed:\n%s", r.output)
	}
	handoff := r.reports[len(r.reports)-1]
	if handoff["decision"] != "follow" || handoff["workflow"] != "argo/e2e-running" || handoff["reason"] != "e2e-running is already running this spec (Running)" ||
		handoff["ca_secret"] != "argo/argocd-ca from deployctl_argocd_ca" {
		t.Errorf("handoff report %v", handoff)
	}
	if s := submitted(r); len(s) != 0 {
		t.Errorf("a second deploy was submitted while one runs: %v", s)
	}
	if got := unb64(t, r.state.Objects["Secret/argo/argocd-ca"].Data["bundle.pem"]); got != strings.TrimSpace(caPEM) {
		t.Errorf("CA Secret holds %q, want the given CA", got)
	}
}

// TestBootstrapHandoffRefuses: what PRE-CHECK refuses, each with a message
// that says why and what to do; nothing is written and no deploy submitted.
func TestBootstrapHandoffRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		setup func(t *testing.T, p *spec.Platform, fc *fakeCluster)
		want  string
	}{
		"a webhook token no header carries": {func(t *testing.T, p *spec.Platform, fc *fakeCluster) {
			fc.put(object("Secret", "argocd", "argocd-secret", nil, map[string]string{"tls.crt": b64(selfSigned(t, argoCDHosts("argocd")...))}, nil))
		}, "vault_deployctl_argocd_token and vault_deployctl_webhook_token must each be one bearer token (RFC 6750"},
		"a CA Secret deployctl did not write": {func(t *testing.T, p *spec.Platform, fc *fakeCluster) {
			fc.put(object("Secret", "argocd", "argocd-secret", nil, map[string]string{"tls.crt": b64(selfSigned(t, argoCDHosts("argocd")...))}, nil))
			fc.put(object("Secret", "argo", "argocd-ca", nil, map[string]string{"bundle.pem": b64("someone else's")}, nil))
		}, "Secret argo/argocd-ca (spec.argocd.caSecret) exists, was not written by deployctl (no label app.kubernetes.io/managed-by=deployctl) " +
			"and its key bundle.pem does not hold the CA from Secret argocd-secret, tls.crt: the handoff does not replace it"},
		"a certificate for another host": {func(t *testing.T, p *spec.Platform, fc *fakeCluster) {
			fc.put(object("Secret", "argocd", "argocd-secret", nil, map[string]string{"tls.crt": b64(selfSigned(t, argoCDHosts("cd")...))}, nil))
		}, "would not verify for argocd-server.argocd.svc (spec.argocd.server) against the CA from Secret argocd-secret, tls.crt"},
		"a CA that did not issue the certificate": {func(t *testing.T, p *spec.Platform, fc *fakeCluster) {
			other, _ := privateCA(t)
			_, leaf := privateCA(t, "argocd-server.argocd.svc")
			fc.put(object("Secret", "argocd", "argocd-server-tls", nil, map[string]string{"ca.crt": b64(other), "tls.crt": b64(leaf)}, nil))
		}, "would not verify for argocd-server.argocd.svc"},
		"no PEM": {func(t *testing.T, p *spec.Platform, fc *fakeCluster) {
			fc.put(object("Secret", "argocd", "argocd-server-tls", nil, map[string]string{"ca.crt": b64("not a certificate"), "tls.crt": b64(selfSigned(t, "argocd-server.argocd.svc"))}, nil))
		}, "the CA for spec.argocd.caSecret (Secret argocd-server-tls, ca.crt) holds no PEM certificate"},
		"no certificate at all": {func(t *testing.T, p *spec.Platform, fc *fakeCluster) {},
			"no certificate for spec.argocd.caSecret (argo/argocd-ca): argocd has no argocd-server-tls Secret and argocd-secret has no tls.crt"},
		"a deploy of another spec running": {func(t *testing.T, p *spec.Platform, fc *fakeCluster) {
			fc.put(object("Secret", "argocd", "argocd-secret", nil, map[string]string{"tls.crt": b64(selfSigned(t, argoCDHosts("argocd")...))}, nil))
			fc.put(finishedDeploy(p, "e2e-other", "2029-01-02T00:00:00Z", "fedcba9876543210", "Running"))
		}, "deploy e2e-other (spec hash fedcba9876543210) of this platform is Running: wait for it to finish, or stop it (argo stop e2e-other -n argo)"},
	}
	// Extra variables (JSON) of a case.
	vars := map[string]string{"a webhook token no header carries": `{"gitops_handoff_webhook_token": "h00k tok3n"}`}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := withCA(t)
			fc := newFakeCluster(p)
			tc.setup(t, p, fc)
			extra := handoffOnly(p, fc)
			if v := vars[name]; v != "" {
				extra = append(extra, "-e", v)
			}
			before := map[string]fakeObject{}
			for k, v := range fc.Objects {
				before[k] = v
			}
			r, _ := runSite(t, p, fc, extra...)
			if r.ok {
				t.Fatal("site.yml succeeded")
			}
			if len(r.reports) != 1 {
				t.Fatalf("%d RESULT reports, want the handoff's alone", len(r.reports))
			}
			handoff := r.reports[len(r.reports)-1]
			if handoff["role"] != "gitops-handoff" || handoff["status"] != "failed" || !strings.Contains(strings.Join(strings.Fields(handoff["error"].(string)), " "), tc.want) {
				t.Errorf("handoff report %v\nwant error %q", handoff, tc.want)
			}
			if !reflect.DeepEqual(r.state.Objects, before) || len(r.state.Applied) != 0 {
				t.Errorf("the refused handoff changed the cluster: applied %v", r.state.Applied)
			}
			if strings.Contains(r.output, "tok3n") || strings.Contains(r.output, "s3cret-token") {
				t.Error("the output shows a token")
			}
		})
	}
}
