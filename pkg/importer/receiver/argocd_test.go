package receiver

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	apppath "github.com/argoproj/argo-cd/v2/util/app/path"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"
)

// newestArgoCD is the newest Argo CD deployctl supports: its CRD is the
// schema an Application must pass.
const newestArgoCD = "github.com/argoproj/argo-cd/v3@v3.6.1"

var (
	crdOnce   sync.Once
	crdSchema *validate.SchemaValidator
	crdErr    error
)

// applicationCRD is the Application CRD's OpenAPI schema of newestArgoCD,
// from the module cache (go mod download: the Go proxy, nothing else).
func applicationCRD(t *testing.T) *validate.SchemaValidator {
	t.Helper()
	crdOnce.Do(func() {
		raw, err := crdOpenAPI(newestArgoCD)
		if err != nil {
			crdErr = err
			return
		}
		var s spec.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			crdErr = err
			return
		}
		crdSchema = validate.NewSchemaValidator(&s, nil, "", strfmt.Default)
	})
	if crdErr != nil {
		noModule(t, crdErr)
	}
	return crdSchema
}

// noModule ends a test that needs an Argo CD module the Go proxy did not
// give: a failure in CI (which reaches the proxy: a skip would hide the
// test), a skip elsewhere.
func noModule(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("the Argo CD module cannot be had, so its CRD cannot judge: %v", err)
	}
	t.Skipf("the Argo CD module cannot be had, so its CRD cannot judge: %v", err)
}

// crdOpenAPI is the Application CRD's OpenAPI schema of an Argo CD module
// (module@version), from the module cache (go mod download: the Go proxy,
// nothing else).
func crdOpenAPI(module string) (json.RawMessage, error) {
	// The module zip is read, not its folder: Go 1.26 downloads the v3.6
	// module (it says the module needs Go 1.27) but does not extract it.
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = os.TempDir() // outside the module: go.mod and go.sum stay as they are
	out, _ := cmd.Output()
	var mod struct{ Zip, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Zip == "" {
		return nil, fmt.Errorf("go mod download %s: %s%v", module, mod.Error, err)
	}
	raw, err := readZip(mod.Zip, module+"/manifests/crds/application-crd.yaml")
	if err != nil {
		return nil, err
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil || len(crd.Spec.Versions) == 0 {
		return nil, fmt.Errorf("%s application-crd.yaml: %v", module, err)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema, nil
}

// argoCDRefuses is what Argo CD's CRD and Kubernetes refuse in an
// Application: nil when they create it and can render and apply its
// fields. Argo CD's Go validation of a created Application (util/argo
// ValidatePermissions, GetRefSources, the API server's
// validateAndNormalizeApp) cannot be linked here (v2.14's util/argo does
// not compile against this module's OpenTelemetry, and v3.6's needs Go
// 1.27): argoCDGoRefuses runs it in its own program.
func argoCDRefuses(t *testing.T, obj map[string]any) []string {
	var out []string
	if res := applicationCRD(t).Validate(obj); res != nil && !res.IsValid() {
		for _, e := range res.Errors {
			out = append(out, "CRD: "+e.Error())
		}
	}
	raw, _ := json.Marshal(obj)
	var app appv1.Application
	if err := json.Unmarshal(raw, &app); err != nil {
		return append(out, "decode: "+err.Error())
	}
	for _, s := range append(app.Spec.Sources, sourceOf(app.Spec.Source)...) {
		if s.Path == "" {
			continue
		}
		// The repo server's rule: not absolute, not outside the repository
		// (that the folder exists is the repository's business).
		if _, err := apppath.Path("/repo", s.Path); err != nil && (strings.Contains(err.Error(), "absolute") || strings.Contains(err.Error(), "outside root")) {
			out = append(out, "repo server: "+err.Error())
		}
	}
	return append(out, kubernetesRefuses(&app)...)
}

// readZip reads one file of a module zip.
func readZip(zipFile, name string) ([]byte, error) {
	z, err := zip.OpenReader(zipFile)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	f, err := z.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", zipFile, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

func sourceOf(s *appv1.ApplicationSource) []appv1.ApplicationSource {
	if s == nil {
		return nil
	}
	return []appv1.ApplicationSource{*s}
}

// kubernetesRefuses applies apimachinery's validators to the Kubernetes
// values of an Application: its own labels, annotations and namespace, and
// those Argo CD and Kustomize put on what they create.
func kubernetesRefuses(app *appv1.Application) []string {
	var errs field.ErrorList
	// A custom resource's name: what the API server's ValidateObjectMeta
	// applies to it.
	// A file without a namespace is applied into the one the client names.
	md := app.ObjectMeta.DeepCopy()
	if md.Namespace == "" {
		md.Namespace = "argocd"
	}
	errs = append(errs, apivalidation.ValidateObjectMeta(md, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	ns := func(v string, p *field.Path) {
		if v == "" {
			return
		}
		for _, m := range apivalidation.ValidateNamespaceName(v, false) {
			errs = append(errs, field.Invalid(p, v, m))
		}
	}
	ns(app.Spec.Destination.Namespace, field.NewPath("spec", "destination", "namespace"))
	// The project names an AppProject, a custom resource ("" is Argo CD's
	// "default").
	if p := app.Spec.Project; p != "" {
		for _, m := range apivalidation.NameIsDNSSubdomain(p, false) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "project"), p, m))
		}
	}
	if sp := app.Spec.SyncPolicy; sp != nil && sp.ManagedNamespaceMetadata != nil {
		p := field.NewPath("spec", "syncPolicy", "managedNamespaceMetadata")
		errs = append(errs, metav1validation.ValidateLabels(sp.ManagedNamespaceMetadata.Labels, p.Child("labels"))...)
		errs = append(errs, apivalidation.ValidateAnnotations(sp.ManagedNamespaceMetadata.Annotations, p.Child("annotations"))...)
	}
	for _, s := range append(app.Spec.Sources, sourceOf(app.Spec.Source)...) {
		if k := s.Kustomize; k != nil {
			p := field.NewPath("spec", "source", "kustomize")
			errs = append(errs, metav1validation.ValidateLabels(k.CommonLabels, p.Child("commonLabels"))...)
			errs = append(errs, apivalidation.ValidateAnnotations(k.CommonAnnotations, p.Child("commonAnnotations"))...)
			ns(k.Namespace, p.Child("namespace"))
		}
	}
	var out []string
	for _, e := range errs {
		out = append(out, "Kubernetes: "+e.Error())
	}
	return out
}
