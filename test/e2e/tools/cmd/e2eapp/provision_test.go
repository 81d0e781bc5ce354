package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A claim handed to the provisioner gets one volume bound to it with its
// class's reclaim policy; a claim handed to another provisioner, a bound
// one and one whose class is gone get none.
func TestProvisionMakesOneVolumePerHandedClaim(t *testing.T) {
	claims := `{"items": [
	 {"metadata": {"name": "db-data", "namespace": "data", "uid": "u1", "annotations": {"volume.kubernetes.io/storage-provisioner": "rook"}},
	  "spec": {"storageClassName": "ceph-block", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Pending"}},
	 {"metadata": {"name": "other", "namespace": "data", "uid": "u2", "annotations": {"volume.kubernetes.io/storage-provisioner": "ebs"}},
	  "spec": {"storageClassName": "gp3"}, "status": {"phase": "Pending"}},
	 {"metadata": {"name": "bound", "namespace": "data", "uid": "u3", "annotations": {"volume.kubernetes.io/storage-provisioner": "rook"}},
	  "spec": {"storageClassName": "ceph-block", "volumeName": "pvc-u3"}, "status": {"phase": "Bound"}},
	 {"metadata": {"name": "orphan", "namespace": "data", "uid": "u4", "annotations": {"volume.kubernetes.io/storage-provisioner": "rook"}},
	  "spec": {"storageClassName": "gone"}, "status": {"phase": "Pending"}}]}`
	var mu sync.Mutex
	var made []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/persistentvolumeclaims":
			io.WriteString(w, claims)
		case r.Method == http.MethodGet && r.URL.Path == "/apis/storage.k8s.io/v1/storageclasses/ceph-block":
			io.WriteString(w, `{"reclaimPolicy": "Retain"}`)
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/persistentvolumes":
			var pv map[string]any
			if err := json.NewDecoder(r.Body).Decode(&pv); err != nil {
				t.Error(err)
			}
			mu.Lock()
			made = append(made, pv)
			mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	p := &provisioner{name: "rook", dir: "/var/pv", labels: map[string]string{"app.kubernetes.io/part-of": "e2e-rfc"}}
	p.provision(&kube{base: srv.URL, c: srv.Client()})
	if len(made) != 1 {
		t.Fatalf("made %d volumes, want 1: %v", len(made), made)
	}
	got, _ := json.Marshal(made[0])
	want := `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"annotations":{"pv.kubernetes.io/provisioned-by":"rook"},"labels":{"app.kubernetes.io/part-of":"e2e-rfc"},"name":"pvc-u1"},"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"},"claimRef":{"apiVersion":"v1","kind":"PersistentVolumeClaim","name":"db-data","namespace":"data","uid":"u1"},"hostPath":{"path":"/var/pv/pvc-u1","type":"DirectoryOrCreate"},"persistentVolumeReclaimPolicy":"Retain","storageClassName":"ceph-block"}}`
	if string(got) != want {
		t.Errorf("volume\n got %s\nwant %s", got, want)
	}
}
