package executor

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deployctl/deployctl/pkg/kube"
)

// GroupVersionResources the executor reads or writes.
var (
	gvrCWT    = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "clusterworkflowtemplates"}
	gvrWT     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflowtemplates"}
	gvrSecret = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// restConfig is the client configuration of the kubeconfig's current context.
func (c *Config) restConfig(action Action) (*rest.Config, error) {
	rc, err := clientcmd.NewDefaultClientConfig(*c.kubeconfig, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	rc.UserAgent = "deployctl/" + string(action)
	rc.Timeout = kube.RequestTimeout
	rc.QPS, rc.Burst = 50, 100
	kube.RegisterSentCredentials(rc, c.redact)
	return rc, nil
}
