package resdeps

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Rule is one kind of dependency: what a provider's object offers, and
// what a consumer's object needs. A need is met by the provisions of the
// same key. Adding a rule is one entry in Rules and a test in rules_test.go.
type Rule struct {
	Name string
	// Provides lists what o offers to other apps' objects.
	Provides func(x *Context, o Object) []Provision
	// Needs lists the keys o needs.
	Needs func(x *Context, o Object) []string
	// Sig, for a rule whose provisions Match, is the part of a consumer
	// object its provisions' Unlabelled reads: objects of one Sig are
	// accepted alike but for their labels, so Infer asks once per Sig
	// (and per Class), then only the Labels selector per object.
	Sig func(x *Context, o Object) string
}

// Provision is one thing an object offers.
type Provision struct {
	Key string
	// What names it in evidence: "CRD certificates.cert-manager.io".
	What string
	// Match, when set, makes the provision serve only the needs of the
	// objects it accepts, and every provider that accepts one is needed
	// (an object goes through every admission webhook that intercepts
	// it); without Match a key has one provider, and two are a conflict.
	Match func(x *Context, consumer Object) bool
	// By, with Match, is the app that serves the provision when not the
	// one that declares it (a webhook's Service deployed by another app).
	By string
	// Class and Groups, with Match, index the provision so that Infer asks
	// only what can match: provisions of one Class accept the same
	// objects, and Match accepts only objects of Groups ("*": any group;
	// nil: not indexed by group).
	Class  string
	Groups []string
	// Unlabelled and Labels, for a rule with Sig: Match is Unlabelled
	// and Labels matching the consumer's labels.
	Unlabelled func(x *Context, consumer Object) bool
	Labels     labels.Selector
}

// Rules is the table. Needs and provisions of kinds no rule names are
// ignored, never guessed.
var Rules = []Rule{
	{Name: "crd", Provides: crdProvides, Needs: crdNeeds},
	{Name: "apiservice", Provides: apiServiceProvides, Needs: apiServiceNeeds},
	{Name: "storageclass", Provides: storageClassProvides, Needs: storageClassNeeds},
	{Name: "ingressclass", Provides: ingressClassProvides, Needs: ingressClassNeeds},
	{Name: "gatewayclass", Provides: named("gateway.networking.k8s.io", "GatewayClass", "gatewayclass", "GatewayClass"), Needs: gatewayClassNeeds},
	{Name: "gateway", Provides: namespaced("gateway.networking.k8s.io", "Gateway", "gateway", "Gateway"), Needs: gatewayNeeds},
	{Name: "issuer", Provides: issuerProvides, Needs: issuerNeeds},
	{Name: "secretstore", Provides: secretStoreProvides, Needs: secretStoreNeeds},
	{Name: "namespace", Provides: named("", "Namespace", "namespace", "Namespace"), Needs: namespaceNeeds},
	{Name: "webhook", Provides: webhookProvides, Needs: webhookNeeds, Sig: webhookSig},
	{Name: "priorityclass", Provides: named("scheduling.k8s.io", "PriorityClass", "priorityclass", "PriorityClass"), Needs: podField("priorityClassName", "priorityclass")},
	{Name: "runtimeclass", Provides: named("node.k8s.io", "RuntimeClass", "runtimeclass", "RuntimeClass"), Needs: podField("runtimeClassName", "runtimeclass")},
}

func is(o Object, group, kind string) bool { return o.Group() == group && o.Kind() == kind }

func key(parts ...string) string { return strings.Join(parts, " ") }

// named: a cluster-scoped object of group/kind provides "prefix NAME".
func named(group, kind, prefix, what string) func(*Context, Object) []Provision {
	return func(_ *Context, o Object) []Provision {
		if !is(o, group, kind) || o.Name() == "" {
			return nil
		}
		return []Provision{{Key: key(prefix, o.Name()), What: what + " " + o.Name()}}
	}
}

// namespaced: a namespaced object of group/kind provides "prefix NS/NAME".
func namespaced(group, kind, prefix, what string) func(*Context, Object) []Provision {
	return func(x *Context, o Object) []Provision {
		ns := x.namespaceOf(o)
		if !is(o, group, kind) || o.Name() == "" || ns == "" {
			return nil
		}
		return []Provision{{Key: key(prefix, ns+"/"+o.Name()), What: what + " " + ns + "/" + o.Name()}}
	}
}

// CRDs: an object of a kind outside the built-in groups needs its CRD.

func crdProvides(_ *Context, o Object) []Provision {
	if !is(o, "apiextensions.k8s.io", "CustomResourceDefinition") {
		return nil
	}
	g, k := str(o.Obj, "spec", "group"), str(o.Obj, "spec", "names", "kind")
	if g == "" || k == "" {
		return nil
	}
	return []Provision{{Key: key("kind", g+"/"+k), What: "CRD " + o.Name()}}
}

func crdNeeds(_ *Context, o Object) []string {
	if builtinGroups[o.Group()] || o.Kind() == "" {
		return nil
	}
	return []string{key("kind", o.Group()+"/"+o.Kind())}
}

// An APIService serves a whole group through a Service (metrics.k8s.io):
// its kinds have no CRD.
func apiServiceProvides(_ *Context, o Object) []Provision {
	if !is(o, "apiregistration.k8s.io", "APIService") || at(o.Obj, "spec", "service") == nil {
		return nil
	}
	g := str(o.Obj, "spec", "group")
	if g == "" {
		return nil
	}
	return []Provision{{Key: key("group", g), What: "APIService " + o.Name()}}
}

func apiServiceNeeds(_ *Context, o Object) []string {
	if builtinGroups[o.Group()] {
		return nil
	}
	return []string{key("group", o.Group())}
}

// Storage: a PVC (or a StatefulSet's volumeClaimTemplate) needs the
// StorageClass it names; one that names none gets the default class.

const (
	defaultClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	defaultClassAnnotationBeta = "storageclass.beta.kubernetes.io/is-default-class"
	defaultStorageClass        = "storageclass (default)"
)

func storageClassProvides(_ *Context, o Object) []Provision {
	if !is(o, "storage.k8s.io", "StorageClass") || o.Name() == "" {
		return nil
	}
	out := []Provision{{Key: key("storageclass", o.Name()), What: "StorageClass " + o.Name()}}
	if o.Annotation(defaultClassAnnotation) == "true" || o.Annotation(defaultClassAnnotationBeta) == "true" {
		out = append(out, Provision{Key: defaultStorageClass, What: "default StorageClass " + o.Name()})
	}
	return out
}

func storageClassNeeds(_ *Context, o Object) []string {
	var claims []map[string]any // metadata+spec of each claim
	switch {
	case is(o, "", "PersistentVolumeClaim"):
		claims = append(claims, o.Obj)
	case is(o, "apps", "StatefulSet"):
		for _, t := range list(o.Obj, "spec", "volumeClaimTemplates") {
			if m, ok := t.(map[string]any); ok {
				claims = append(claims, m)
			}
		}
	}
	var out []string
	for _, c := range claims {
		if k := claimClass(c); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// claimClass: spec.storageClassName, else the beta annotation, else the
// default class; "" (explicitly empty) asks for no class at all.
func claimClass(c map[string]any) string {
	if has(c, "spec", "storageClassName") && at(c, "spec", "storageClassName") != nil {
		if s := str(c, "spec", "storageClassName"); s != "" {
			return key("storageclass", s)
		}
		return ""
	}
	if s, ok := at(c, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class").(string); ok {
		if s == "" {
			return ""
		}
		return key("storageclass", s)
	}
	return defaultStorageClass
}

// Ingress: the IngressClass named by spec.ingressClassName or the legacy
// annotation, else the default class.

const defaultIngressClass = "ingressclass (default)"

func ingressClassProvides(_ *Context, o Object) []Provision {
	if !is(o, "networking.k8s.io", "IngressClass") || o.Name() == "" {
		return nil
	}
	out := []Provision{{Key: key("ingressclass", o.Name()), What: "IngressClass " + o.Name()}}
	if o.Annotation("ingressclass.kubernetes.io/is-default-class") == "true" {
		out = append(out, Provision{Key: defaultIngressClass, What: "default IngressClass " + o.Name()})
	}
	return out
}

func ingressClassNeeds(_ *Context, o Object) []string {
	if !is(o, "networking.k8s.io", "Ingress") && !is(o, "extensions", "Ingress") {
		return nil
	}
	if c := str(o.Obj, "spec", "ingressClassName"); c != "" {
		return []string{key("ingressclass", c)}
	}
	if c := o.Annotation("kubernetes.io/ingress.class"); c != "" {
		return []string{key("ingressclass", c)}
	}
	return []string{defaultIngressClass}
}

// Gateway API: a Gateway needs its GatewayClass; a route needs the
// Gateways of its parentRefs.

func gatewayClassNeeds(_ *Context, o Object) []string {
	if c := str(o.Obj, "spec", "gatewayClassName"); is(o, "gateway.networking.k8s.io", "Gateway") && c != "" {
		return []string{key("gatewayclass", c)}
	}
	return nil
}

var routeKinds = []string{"HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"}

func gatewayNeeds(x *Context, o Object) []string {
	if o.Group() != "gateway.networking.k8s.io" || !slices.Contains(routeKinds, o.Kind()) {
		return nil
	}
	var out []string
	for _, r := range list(o.Obj, "spec", "parentRefs") {
		g, k := "gateway.networking.k8s.io", "Gateway"
		if has(r, "group") {
			g = str(r, "group")
		}
		if has(r, "kind") {
			k = str(r, "kind")
		}
		ns := str(r, "namespace")
		if ns == "" {
			ns = x.namespaceOf(o)
		}
		if g == "gateway.networking.k8s.io" && k == "Gateway" && str(r, "name") != "" && ns != "" {
			out = append(out, key("gateway", ns+"/"+str(r, "name")))
		}
	}
	return out
}

// cert-manager: a Certificate (or CertificateRequest) needs its issuerRef;
// an Ingress or Gateway annotated for cert-manager's ingress-shim needs
// the issuer the annotation names.

func issuerProvides(x *Context, o Object) []Provision {
	switch {
	case is(o, "cert-manager.io", "ClusterIssuer") && o.Name() != "":
		return []Provision{{Key: key("issuer", "cert-manager.io/ClusterIssuer", o.Name()), What: "ClusterIssuer " + o.Name()}}
	case is(o, "cert-manager.io", "Issuer"):
		if ns := x.namespaceOf(o); ns != "" && o.Name() != "" {
			return []Provision{{Key: key("issuer", "cert-manager.io/Issuer", ns+"/"+o.Name()), What: "Issuer " + ns + "/" + o.Name()}}
		}
	}
	return nil
}

func issuerNeeds(x *Context, o Object) []string {
	ns := x.namespaceOf(o)
	ref := func(group, kind, name string) []string {
		if group == "" {
			group = "cert-manager.io"
		}
		if kind == "" {
			kind = "Issuer"
		}
		if name == "" {
			return nil
		}
		if kind == "ClusterIssuer" {
			return []string{key("issuer", group+"/"+kind, name)}
		}
		if ns == "" {
			return nil
		}
		return []string{key("issuer", group+"/"+kind, ns+"/"+name)}
	}
	switch {
	case is(o, "cert-manager.io", "Certificate") || is(o, "cert-manager.io", "CertificateRequest"):
		r := at(o.Obj, "spec", "issuerRef")
		return ref(str(r, "group"), str(r, "kind"), str(r, "name"))
	case is(o, "networking.k8s.io", "Ingress") || is(o, "extensions", "Ingress") || is(o, "gateway.networking.k8s.io", "Gateway"):
		if n := o.Annotation("cert-manager.io/cluster-issuer"); n != "" {
			return ref(o.Annotation("cert-manager.io/issuer-group"), "ClusterIssuer", n)
		}
		if n := o.Annotation("cert-manager.io/issuer"); n != "" {
			return ref(o.Annotation("cert-manager.io/issuer-group"), o.Annotation("cert-manager.io/issuer-kind"), n)
		}
	}
	return nil
}

// External Secrets: an ExternalSecret (PushSecret, ClusterExternalSecret)
// needs the (Cluster)SecretStore of its store references.

func secretStoreProvides(x *Context, o Object) []Provision {
	switch {
	case is(o, "external-secrets.io", "ClusterSecretStore") && o.Name() != "":
		return []Provision{{Key: key("secretstore", "ClusterSecretStore", o.Name()), What: "ClusterSecretStore " + o.Name()}}
	case is(o, "external-secrets.io", "SecretStore"):
		if ns := x.namespaceOf(o); ns != "" && o.Name() != "" {
			return []Provision{{Key: key("secretstore", "SecretStore", ns+"/"+o.Name()), What: "SecretStore " + ns + "/" + o.Name()}}
		}
	}
	return nil
}

func secretStoreNeeds(x *Context, o Object) []string {
	if o.Group() != "external-secrets.io" {
		return nil
	}
	var refs []any
	switch o.Kind() {
	case "ExternalSecret":
		refs = storeRefs(o.Obj["spec"])
	case "ClusterExternalSecret":
		refs = storeRefs(at(o.Obj, "spec", "externalSecretSpec"))
	case "PushSecret":
		refs = list(o.Obj, "spec", "secretStoreRefs")
	default:
		return nil
	}
	ns := x.namespaceOf(o)
	var out []string
	for _, r := range refs {
		name, kind := str(r, "name"), str(r, "kind")
		switch {
		case name == "":
		case kind == "ClusterSecretStore":
			out = append(out, key("secretstore", "ClusterSecretStore", name))
		case (kind == "" || kind == "SecretStore") && ns != "" && o.Kind() != "ClusterExternalSecret":
			out = append(out, key("secretstore", "SecretStore", ns+"/"+name))
		}
	}
	return out
}

// storeRefs: spec.secretStoreRef and each data[]/dataFrom[] sourceRef.storeRef.
func storeRefs(spec any) []any {
	var out []any
	if r := at(spec, "secretStoreRef"); r != nil {
		out = append(out, r)
	}
	for _, field := range []string{"data", "dataFrom"} {
		for _, d := range list(spec, field) {
			if r := at(d, "sourceRef", "storeRef"); r != nil {
				out = append(out, r)
			}
		}
	}
	return out
}

// Namespaces: an object needs the Namespace it goes into (an app that
// creates its destination namespace provides that one itself: Context).
func namespaceNeeds(x *Context, o Object) []string {
	if ns := x.namespaceOf(o); ns != "" {
		return []string{key("namespace", ns)}
	}
	return nil
}

// Priority and runtime classes: pods need the class they name.
func podField(field, prefix string) func(*Context, Object) []string {
	return func(_ *Context, o Object) []string {
		var out []string
		for _, p := range podSpecs(o) {
			if s := str(p, field); s != "" {
				out = append(out, key(prefix, s))
			}
		}
		return out
	}
}

// Admission webhooks: an object that a webhook with failurePolicy Fail
// intercepts on create or update cannot be applied until the webhook's
// Service answers, so it needs the app that deploys that Service (else,
// when no app or more than one does, the app of the configuration).

const admission = "admission"

func webhookProvides(x *Context, o Object) []Provision {
	kind := ""
	switch {
	case is(o, "admissionregistration.k8s.io", "MutatingWebhookConfiguration"):
		kind = "mutating"
	case is(o, "admissionregistration.k8s.io", "ValidatingWebhookConfiguration"):
		kind = "validating"
	default:
		return nil
	}
	beta := strings.HasSuffix(o.APIVersion(), "/v1beta1")
	var out []Provision
	for _, w := range list(o.Obj, "webhooks") {
		fp := str(w, "failurePolicy")
		if fp == "Ignore" || (fp == "" && beta) { // v1beta1's default is Ignore
			continue
		}
		if at(w, "clientConfig", "service") == nil {
			continue // a URL outside the cluster: no app of the platform serves it
		}
		h := hook{rules: list(w, "rules"), objects: selector(at(w, "objectSelector")), namespaces: selector(at(w, "namespaceSelector")),
			groups: map[string]bool{}}
		h.parsed = parseRules(h.rules)
		var groups []string
		for _, r := range h.rules {
			for _, g := range strList(r, "apiGroups") {
				if !h.groups[g] {
					groups = append(groups, g)
				}
				h.groups[g] = true
			}
		}
		// What intercepts reads of the webhook: webhooks alike in it are
		// one class.
		class, err := json.Marshal([]any{h.rules, at(w, "objectSelector"), at(w, "namespaceSelector")})
		if err != nil {
			class = nil // unique below: never merged with another
		}
		svc := str(w, "clientConfig", "service", "namespace") + "/" + str(w, "clientConfig", "service", "name")
		out = append(out, Provision{
			Key:        admission,
			What:       kind + " webhook " + str(w, "name") + " (service " + svc + ")",
			Match:      h.intercepts,
			By:         x.services[svc], // the app whose Service answers; else the configuration's
			Class:      classOf(class, len(out), o),
			Groups:     groups,
			Unlabelled: h.unlabelled,
			Labels:     h.objects,
		})
	}
	return out
}

func webhookNeeds(_ *Context, o Object) []string {
	if o.Kind() == "" {
		return nil
	}
	return []string{admission}
}

// classOf is a webhook's class: what intercepts reads of it, or, when that
// cannot be written down, a class of its own.
func classOf(class []byte, i int, o Object) string {
	if class != nil {
		return string(class)
	}
	return fmt.Sprintf("%s#%d", o.Where(), i)
}

// webhookSig is what intercepts reads of a consumer object but for its
// labels: its group, resource, scope and namespace (the namespace's
// labels follow from its name).
func webhookSig(x *Context, c Object) string {
	namespaced, known := x.scope(c)
	if !known {
		namespaced = c.Namespace() != ""
	}
	return fmt.Sprintf("%q %q %t %q", c.Group(), x.resource(c), namespaced, x.namespaceOf(c))
}

// hook is one admission webhook, its selectors and rules parsed once.
type hook struct {
	rules               []any
	parsed              []hookRule
	objects, namespaces labels.Selector
	groups              map[string]bool // of all its rules: a quick no for most objects
}

// hookRule is one rule of a webhook that intercepts creating or updating.
type hookRule struct {
	anyGroup, anyResource bool
	groups, resources     []string
	scope                 string
}

func parseRules(rules []any) []hookRule {
	var out []hookRule
	for _, r := range rules {
		ops := strList(r, "operations")
		if !(slices.Contains(ops, "*") || slices.Contains(ops, "CREATE") || slices.Contains(ops, "UPDATE")) {
			continue
		}
		hr := hookRule{groups: strList(r, "apiGroups"), resources: strList(r, "resources"), scope: str(r, "scope")}
		hr.anyGroup = slices.Contains(hr.groups, "*")
		hr.anyResource = slices.Contains(hr.resources, "*") || slices.Contains(hr.resources, "*/*")
		out = append(out, hr)
	}
	return out
}

// intercepts says whether the webhook intercepts creating or updating c.
func (h hook) intercepts(x *Context, c Object) bool {
	return h.objects.Matches(labels.Set(c.Labels())) && h.unlabelled(x, c)
}

// unlabelled is intercepts but for the objectSelector.
func (h hook) unlabelled(x *Context, c Object) bool {
	if !h.groups["*"] && !h.groups[c.Group()] {
		return false
	}
	ns := x.namespaceOf(c)
	namespaced, known := x.scope(c)
	if !known {
		namespaced = c.Namespace() != ""
	}
	if namespaced && ns != "" && !h.namespaces.Matches(x.namespaceLabels(ns)) {
		return false
	}
	res := x.resource(c)
	for _, r := range h.parsed {
		if !r.anyGroup && !slices.Contains(r.groups, c.Group()) {
			continue
		}
		if !r.anyResource && !slices.Contains(r.resources, res) {
			continue
		}
		switch r.scope {
		case "Cluster":
			if namespaced {
				continue
			}
		case "Namespaced":
			if !namespaced {
				continue
			}
		}
		return true
	}
	return false
}

// selector parses a metav1.LabelSelector held as unstructured data; an
// absent one selects everything, an unreadable one nothing (never guessed
// into an edge).
func selector(sel any) labels.Selector {
	if sel == nil {
		return labels.Everything()
	}
	raw, err := json.Marshal(sel)
	if err != nil {
		return labels.Nothing()
	}
	var ls metav1.LabelSelector
	if json.Unmarshal(raw, &ls) != nil {
		return labels.Nothing()
	}
	s, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return labels.Nothing()
	}
	return s
}
