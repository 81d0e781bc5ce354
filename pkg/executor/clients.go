package executor

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deployctl/deployctl/pkg/kube"
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
