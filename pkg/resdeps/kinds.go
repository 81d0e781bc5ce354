package resdeps

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinGroups are the API groups kube-apiserver serves itself: their kinds
// need no CRD. Groups that merely end in k8s.io but come from CRDs
// (gateway.networking.k8s.io, snapshot.storage.k8s.io, metrics.k8s.io from
// an APIService) are not here.
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "extensions": true,
	"networking.k8s.io": true, "rbac.authorization.k8s.io": true, "storage.k8s.io": true,
	"scheduling.k8s.io": true, "node.k8s.io": true, "admissionregistration.k8s.io": true,
	"apiextensions.k8s.io": true, "apiregistration.k8s.io": true, "certificates.k8s.io": true,
	"coordination.k8s.io": true, "discovery.k8s.io": true, "events.k8s.io": true,
	"flowcontrol.apiserver.k8s.io": true, "authentication.k8s.io": true, "authorization.k8s.io": true,
	"resource.k8s.io": true, "internal.apiserver.k8s.io": true, "storagemigration.k8s.io": true,
}

// clusterScoped are the built-in kinds that have no namespace (group/Kind).
var clusterScoped = map[string]bool{
	"/Namespace": true, "/Node": true, "/PersistentVolume": true, "/ComponentStatus": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"apiextensions.k8s.io/CustomResourceDefinition": true, "apiregistration.k8s.io/APIService": true,
	"storage.k8s.io/StorageClass": true, "storage.k8s.io/CSIDriver": true, "storage.k8s.io/CSINode": true,
	"storage.k8s.io/VolumeAttachment": true, "storage.k8s.io/VolumeAttributesClass": true,
	"networking.k8s.io/IngressClass": true, "networking.k8s.io/IPAddress": true, "networking.k8s.io/ServiceCIDR": true,
	"scheduling.k8s.io/PriorityClass": true, "node.k8s.io/RuntimeClass": true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":     true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration":   true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicy":          true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicyBinding":   true,
	"certificates.k8s.io/CertificateSigningRequest":                 true,
	"certificates.k8s.io/ClusterTrustBundle":                        true,
	"flowcontrol.apiserver.k8s.io/FlowSchema":                       true,
	"flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration":       true,
	"resource.k8s.io/DeviceClass":                                   true,
	"resource.k8s.io/ResourceSlice":                                 true,
	"storagemigration.k8s.io/StorageVersionMigration":               true,
	"internal.apiserver.k8s.io/StorageVersion":                      true,
	"authentication.k8s.io/SelfSubjectReview":                       true,
	"authorization.k8s.io/SelfSubjectAccessReview":                  true,
	"authorization.k8s.io/SelfSubjectRulesReview":                   true,
	"authorization.k8s.io/SubjectAccessReview":                      true,
	"authentication.k8s.io/TokenReview":                             true,
}

// ruleKinds are the scopes of the custom kinds the rules read, for when no
// app of the inventory deploys their CRD (namespaced: true).
var ruleKinds = map[string]bool{
	"cert-manager.io/Certificate": true, "cert-manager.io/CertificateRequest": true,
	"cert-manager.io/Issuer": true, "cert-manager.io/ClusterIssuer": false,
	"external-secrets.io/ExternalSecret": true, "external-secrets.io/SecretStore": true, "external-secrets.io/PushSecret": true,
	"external-secrets.io/ClusterSecretStore": false, "external-secrets.io/ClusterExternalSecret": false,
	"gateway.networking.k8s.io/GatewayClass": false, "gateway.networking.k8s.io/Gateway": true,
	"gateway.networking.k8s.io/HTTPRoute": true, "gateway.networking.k8s.io/GRPCRoute": true,
	"gateway.networking.k8s.io/TLSRoute": true, "gateway.networking.k8s.io/TCPRoute": true, "gateway.networking.k8s.io/UDPRoute": true,
}

// crd is what a CustomResourceDefinition in the inventory says of its kind.
type crd struct {
	plural     string
	namespaced bool
}

// scope says whether objects of o's kind live in a namespace: known for
// built-in kinds and for kinds whose CRD an app deploys.
func (x *Context) scope(o Object) (namespaced, known bool) {
	g, k := o.Group(), o.Kind()
	if builtinGroups[g] {
		return !clusterScoped[g+"/"+k], true
	}
	if c, ok := x.crds[g+"/"+k]; ok {
		return c.namespaced, true
	}
	namespaced, known = ruleKinds[g+"/"+k]
	return namespaced, known
}

// namespaceOf is where o goes: its metadata.namespace, or the app's
// destination for a namespaced kind without one; "" for cluster-scoped
// objects and for kinds whose scope nothing in the inventory tells.
func (x *Context) namespaceOf(o Object) string {
	namespaced, known := x.scope(o)
	if known && !namespaced {
		return ""
	}
	if ns := o.Namespace(); ns != "" {
		return ns
	}
	if known && x.app != nil {
		return x.app.Namespace
	}
	return ""
}

// resource is the plural resource name of o's kind, as admission rules
// name it: the CRD's when an app deploys it, else the API machinery's own
// rule for built-in kinds (meta.UnsafeGuessKindToResource).
func (x *Context) resource(o Object) string {
	g, k := o.Group(), o.Kind()
	if c, ok := x.crds[g+"/"+k]; ok && c.plural != "" {
		return c.plural
	}
	_, v, _ := strings.Cut(o.APIVersion(), "/")
	plural, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: g, Version: v, Kind: k})
	return plural.Resource
}

// podSpecs are the pod specs o runs: a Pod's own, a workload's template.
func podSpecs(o Object) []map[string]any {
	var path []string
	switch o.Group() + "/" + o.Kind() {
	case "/Pod":
		path = []string{"spec"}
	case "/ReplicationController", "/PodTemplate", "apps/Deployment", "apps/ReplicaSet", "apps/StatefulSet", "apps/DaemonSet", "batch/Job":
		path = []string{"spec", "template", "spec"}
		if o.Kind() == "PodTemplate" {
			path = []string{"template", "spec"}
		}
	case "batch/CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		return nil
	}
	if m, ok := at(o.Obj, path...).(map[string]any); ok {
		return []map[string]any{m}
	}
	return nil
}
