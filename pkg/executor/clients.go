package executor

import (
	"time"

	wfclientset "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients are the API clients an action uses. Tests put fakes here.
type Clients struct {
	Kube      kubernetes.Interface
	Dynamic   dynamic.Interface
	Metadata  metadata.Interface // object presence without reading content (Secrets)
	Workflows wfclientset.Interface
}

// GroupVersionResources the executor reads or writes.
var (
	gvrCWT    = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "clusterworkflowtemplates"}
	gvrWT     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflowtemplates"}
	gvrSecret = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// requestTimeout bounds every single API request; waiting is done by
// polling or watching, never by one long request.
const requestTimeout = 30 * time.Second

// restConfig is the client configuration of the kubeconfig's current context.
func (c *Config) restConfig(action Action) (*rest.Config, error) {
	rc, err := clientcmd.NewDefaultClientConfig(*c.kubeconfig, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	rc.UserAgent = "deployctl/" + string(action)
	rc.Timeout = requestTimeout
	rc.QPS, rc.Burst = 50, 100
	RegisterSentCredentials(rc, c.redact)
	return rc, nil
}

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
