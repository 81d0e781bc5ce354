package main

// The stand-in of a CSI provisioner (Ceph's, in the RFC platform): what a
// real one does with a claim, minus the storage. The kube-controller-manager
// hands a Pending claim to an external provisioner by annotating it
// volume.kubernetes.io/storage-provisioner: NAME — only once the claim's
// StorageClass exists and names NAME — and binds the volume made for it
// (pre-bound through claimRef). Volumes it makes are nobody's Argo CD
// resources, so a teardown leaves them under a Retain class (SC-4).

import (
	"encoding/json"
	"log"
	"net/http"
	"path"
)

const provisionerAnnotation = "volume.kubernetes.io/storage-provisioner"

type provisioner struct {
	name, dir string
	labels    map[string]string
}

type claim struct {
	Metadata struct {
		Name, Namespace, UID string
		Annotations          map[string]string
	}
	Spec struct {
		StorageClassName string `json:"storageClassName"`
		AccessModes      []string
		Resources        struct {
			Requests map[string]string
		}
		VolumeName string `json:"volumeName"`
	}
	Status struct{ Phase string }
}

// provision makes a volume for every Pending claim handed to p that has
// none yet. The volume's name is derived from the claim's UID, so a
// repeated pass (or a restart) never makes a second one.
func (p *provisioner) provision(k *kube) {
	var l struct{ Items []claim }
	if _, err := k.do(http.MethodGet, "/api/v1/persistentvolumeclaims", "", nil, &l); err != nil {
		log.Printf("list claims: %v", err)
		return
	}
	for _, c := range l.Items {
		if c.Status.Phase != "Pending" || c.Spec.VolumeName != "" || c.Metadata.Annotations[provisionerAnnotation] != p.name {
			continue
		}
		var class struct {
			ReclaimPolicy string `json:"reclaimPolicy"`
		}
		if _, err := k.do(http.MethodGet, "/apis/storage.k8s.io/v1/storageclasses/"+c.Spec.StorageClassName, "", nil, &class); err != nil {
			log.Printf("claim %s/%s: its class: %v", c.Metadata.Namespace, c.Metadata.Name, err)
			continue
		}
		if class.ReclaimPolicy == "" {
			class.ReclaimPolicy = "Delete"
		}
		name := "pvc-" + c.Metadata.UID
		pv := map[string]any{
			"apiVersion": "v1", "kind": "PersistentVolume",
			"metadata": map[string]any{"name": name, "labels": p.labels,
				"annotations": map[string]string{"pv.kubernetes.io/provisioned-by": p.name}},
			"spec": map[string]any{
				"capacity":                      map[string]string{"storage": c.Spec.Resources.Requests["storage"]},
				"accessModes":                   c.Spec.AccessModes,
				"persistentVolumeReclaimPolicy": class.ReclaimPolicy,
				"storageClassName":              c.Spec.StorageClassName,
				"claimRef": map[string]string{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
					"namespace": c.Metadata.Namespace, "name": c.Metadata.Name, "uid": c.Metadata.UID},
				"hostPath": map[string]string{"path": path.Join(p.dir, name), "type": "DirectoryOrCreate"},
			},
		}
		body, _ := json.Marshal(pv)
		code, err := k.do(http.MethodPost, "/api/v1/persistentvolumes", "application/json", body, nil)
		if err != nil && code != http.StatusConflict {
			log.Printf("provision %s for %s/%s: %v", name, c.Metadata.Namespace, c.Metadata.Name, err)
			continue
		}
		log.Printf("provisioned %s for claim %s/%s (%s)", name, c.Metadata.Namespace, c.Metadata.Name, class.ReclaimPolicy)
	}
}
