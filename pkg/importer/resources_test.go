package importer

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/plan"
	"github.com/deployctl/deployctl/pkg/resdeps"
)

// The dependencies testdata/rfc-manifests shows, listed by hand from its
// files (consumer → provider).
var rfcResourceEdges = []string{
	"backstage → cert-manager-issuers", "backstage → ingress-nginx",
	"backstage-postgres → postgres-operator",
	"ceph-cluster → ceph-operator",
	"ceph-storageclasses → ceph-operator",
	"cert-manager-issuers → cert-manager",
	"external-secrets-stores → external-secrets",
	"grafana → ceph-storageclasses", "grafana → cert-manager-issuers", "grafana → ingress-nginx", "grafana → prometheus-operator-crds",
	"harbor → ceph-storageclasses", "harbor → cert-manager-issuers", "harbor → ingress-nginx",
	"harbor-postgres → postgres-operator",
	"kafka-cluster → strimzi-operator",
	"kargo → cert-manager",
	"keycloak → ceph-storageclasses", "keycloak → cert-manager-issuers", "keycloak → external-secrets", "keycloak → external-secrets-stores", "keycloak → ingress-nginx",
	"keycloak-postgres → postgres-operator",
	"kubevirt → kubevirt-operator",
	"kyverno-policies → kyverno",
	"loki → ceph-storageclasses", "loki → prometheus-operator-crds",
	"metallb-config → metallb",
	"prometheus → cert-manager-issuers", "prometheus → ingress-nginx", "prometheus → prometheus-operator-crds",
	"redis-cluster → redis-operator",
	"tempo → ceph-storageclasses", "tempo → prometheus-operator-crds",
	"temporal → external-secrets", "temporal → external-secrets-stores", "temporal → prometheus-operator-crds",
	"temporal-postgres → postgres-operator",
	"temporal-ui → cert-manager-issuers", "temporal-ui → ingress-nginx",
	"vault → ceph-storageclasses",
}

func importWith(t *testing.T, inv *resdeps.Source, prune bool) (*Result, error) {
	t.Helper()
	in, err := appread.Read([]string{"testdata/rfc"})
	if err != nil {
		t.Fatal(err)
	}
	sf, _ := ParseStackFrom("parent")
	return Import(in, Options{Name: "reference-platform", StackFrom: sf, Inventory: inv, PruneUnexplained: prune})
}

func rfcInventory(t *testing.T) *resdeps.Source {
	t.Helper()
	inv, err := resdeps.SourceConfig{Manifests: "testdata/rfc-manifests"}.Open()
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestResourcesRFC(t *testing.T) {
	inv := rfcInventory(t)
	// Kept: every wave edge is marked; nothing needs adding, the waves
	// order everything already.
	r, err := importWith(t, inv, false)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Resources
	var got []string
	for _, e := range s.Edges {
		got = append(got, e.From+" → "+e.To)
	}
	if !reflect.DeepEqual(got, rfcResourceEdges) {
		t.Fatalf("inferred:\n%s", strings.Join(got, "\n"))
	}
	if s.Inferred != 41 || s.Added != 0 || s.Explained+s.Unexplained != 24 || s.Unchecked != 0 || s.Explained == 0 || s.Unexplained == 0 {
		t.Fatalf("summary %+v", *s)
	}
	text := string(r.YAML)
	for _, want := range []string{
		"- storage-operators # ceph-cluster needs CRD cephclusters.ceph.rook.io from ceph-operator\n",
		"- foundation-wave-0 # from sync-wave only: no resource needs it (inferred from sync-wave -30 → -20 in platform)\n",
		"# Held against what the apps deploy (--manifests testdata/rfc-manifests):",
		"- monitoring-wave-m10 # from sync-wave only, but it orders grafana → ceph-storageclasses (default StorageClass ceph-block) and 7 more through what it waits for: declare that before you delete it\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q", want)
		}
	}
	if n := strings.Count(text, "# from sync-wave only"); n != s.Unexplained || s.Through == 0 {
		t.Errorf("%d marked, %d unexplained", n, s.Unexplained)
	}

	// Pruned: no unexplained edge left, every resource edge ordered, no
	// redundant entry, and the waves are 6.67× the DAG (every app 5m:
	// 20 waves in a row against chains of 3 apps).
	p, err := importWith(t, inv, true)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(p.YAML, []byte("from sync-wave only")) {
		t.Error("pruned spec still has unexplained edges")
	}
	d := writeAndLoad(t, p)
	if m := resdeps.Uncovered(d, s.Edges); len(m) > 0 {
		t.Errorf("not ordered: %v", m)
	}
	if red := d.Redundant(); len(red) > 0 {
		t.Errorf("redundant: %v", red)
	}
	c, err := plan.CompareWaves(d, "", plan.WaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%.2f", c.Ratio); got != "6.67" {
		t.Errorf("ratio %s (waves %v, DAG %v)", got, c.WaveMakespan, c.DAGMakespan)
	}

	// The same input in another order: the same bytes.
	rev := &resdeps.Source{Name: inv.Name, Apps: slices.Clone(inv.Apps)}
	slices.Reverse(rev.Apps)
	again, err := importWith(t, rev, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.YAML, p.YAML) {
		t.Error("output depends on the inventory's order")
	}
}

// A resource dependency against the waves is an error naming the evidence.
func TestResourcesCycle(t *testing.T) {
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ipaddresspools.metallb.io}\nspec: {group: metallb.io, scope: Namespaced, names: {kind: IPAddressPool, plural: ipaddresspools}}\n"
	pool := "apiVersion: metallb.io/v1beta1\nkind: IPAddressPool\nmetadata: {name: default, namespace: metallb-system}\n"
	inv := &resdeps.Source{Name: "--manifests x", Apps: []resdeps.App{
		{Name: "metallb", Objects: mustParse(t, "metallb.yaml", pool)},
		{Name: "metallb-config", Objects: mustParse(t, "config.yaml", crd)},
	}}
	_, err := importWith(t, inv, true)
	if err == nil || !strings.Contains(err.Error(), "metallb needs metallb-config (IPAddressPool metallb-system/default at metallb.yaml:1 needs CRD ipaddresspools.metallb.io), but metallb-config already waits for metallb (through the sync waves or other resources)") {
		t.Fatalf("err = %v", err)
	}
}

// Folders that name no Application are refused; a parent's is noted; apps
// without a folder leave their edges unchecked.
func TestResourcesNames(t *testing.T) {
	_, err := importWith(t, &resdeps.Source{Name: "--manifests x", Apps: []resdeps.App{{Name: "cert-manger"}, {Name: "metalb"}}}, false)
	if err == nil || !strings.Contains(err.Error(), "no Application of the input is named cert-manger, metalb") {
		t.Fatalf("err = %v", err)
	}
	r, err := importWith(t, &resdeps.Source{Name: "--manifests x", Apps: []resdeps.App{{Name: "foundation"}, {Name: "metallb"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"app-of-apps parents are not apps of the spec, their resources not read: foundation", "--manifests x has nothing for 40 apps"} {
		if !strings.Contains(notes, want) {
			t.Errorf("missing note %q in\n%s", want, notes)
		}
	}
	if r.Resources.Unexplained != 0 || r.Resources.Unchecked != 24 {
		t.Errorf("summary %+v", *r.Resources)
	}
	if !strings.Contains(string(r.YAML), "; not checked: no inventory for cert-manager, cert-manager-issuers, metallb-config, sealed-secrets\n") {
		t.Error("no unchecked mark")
	}
}

func mustParse(t *testing.T, file, yml string) []resdeps.Object {
	t.Helper()
	objs, errs := resdeps.Parse(file, []byte(yml))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}
