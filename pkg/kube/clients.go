// Package kube is the Kubernetes side shared by the executor and insight:
// the API clients, and reading a kubeconfig so that no credential it holds
// (or that the clients send) shows in any output.
package kube

import (
	"time"

	wfclientset "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Clients are the API clients a command uses. Tests put fakes here.
type Clients struct {
	Kube      kubernetes.Interface
	Dynamic   dynamic.Interface
	Metadata  metadata.Interface // object presence without reading content (Secrets)
	Workflows wfclientset.Interface
}

// Resources the executor reads or writes besides Applications
// (livestate.GVRApplication).
var (
	GVRClusterWorkflowTemplate = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "clusterworkflowtemplates"}
	GVRWorkflowTemplate        = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflowtemplates"}
	GVRSecret                  = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// RequestTimeout bounds every single API request; waiting is done by
// polling or watching, never by one long request.
const RequestTimeout = 30 * time.Second

// NewClients builds the real clients. A variable, so tests replace it.
var NewClients = func(rc *rest.Config) (*Clients, error) {
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	wf, err := wfclientset.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &Clients{Kube: kube, Dynamic: dyn, Metadata: md, Workflows: wf}, nil
}
