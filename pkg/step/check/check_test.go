package check

import "testing"

func TestResourceCheckParsing(t *testing.T) {
	for spec, want := range map[string]string{
		"resource:/ConfigMap/ns/name":                           "ConfigMap ns/name",
		"resource:ceph.rook.io/CephCluster/rook-ceph/rook-ceph": "CephCluster.ceph.rook.io rook-ceph/rook-ceph",
		"resource:rbac.authorization.k8s.io/ClusterRole//admin": "ClusterRole.rbac.authorization.k8s.io admin",
	} {
		c, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.(*Resource).Ref.String(); got != want || c.String() != spec {
			t.Errorf("%s: %s / %s", spec, got, c)
		}
	}
}
