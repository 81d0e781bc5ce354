// Package receiver holds the differential test of the import against its
// receivers: every Application of every import fixture, and generated
// variants of its fields, judged by deployctl's rules (pkg/spec, through
// the import) and by Argo CD's own (the v3.6.1 Application CRD's schema,
// read from the module cache, and Argo CD's Go validation of a created
// Application, run by test/e2e/tools/argocd-v3.6's argocdvalidate when
// DEPLOYCTL_ARGOCDVALIDATE names it: `make e2e-validate`) and Kubernetes'
// (apimachinery's validators). Only a test: nothing here is linked into
// the product.
package receiver
