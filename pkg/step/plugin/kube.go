package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/deployctl/deployctl/internal/safehttp"
)

// The in-cluster credentials every pod with a mounted ServiceAccount token
// has (the plugin's: deployctl-executor-plugin, which may only get
// workflows in its namespace).
const (
	saDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	// workflowLimit bounds one Workflow read: etcd refuses objects over
	// 1.5 MiB, and a larger status is offloaded by Argo.
	workflowLimit = 8 << 20
)

// kube reads Workflows from the Kubernetes API.
type kube struct {
	base      string // https://host:port
	client    *safehttp.Client
	tokenFile string
}

// inCluster is the client of the pod's own API server.
func inCluster() (*kube, error) { return inClusterFrom(os.Getenv, saDir) }

// inClusterFrom reads the service address from env and the CA and token
// from dir. Only that CA is trusted.
func inClusterFrom(env func(string) string, dir string) (*kube, error) {
	host, port := env("KUBERNETES_SERVICE_HOST"), env("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not running in a pod")
	}
	c, err := safehttp.New(safehttp.Config{TLS: safehttp.TLS{CAFile: dir + "/ca.crt"}, Timeout: 10 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("the ServiceAccount's CA: %v (is automountServiceAccountToken on for the plugin?)", err)
	}
	return &kube{base: "https://" + net.JoinHostPort(host, port), client: c, tokenFile: dir + "/token"}, nil
}

// apiError is an answer other than 200; Forbidden tells a missing
// permission from a fault worth retrying, and a redirect (refused) is
// never retried either.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

func (e *apiError) permanent() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound ||
		e.Status >= 300 && e.Status <= 399
}

// workflow GETs one Workflow's JSON.
func (k *kube) workflow(ctx context.Context, namespace, name string) ([]byte, error) {
	token, err := safehttp.ReadBearerToken(k.tokenFile)
	if err != nil {
		return nil, fmt.Errorf("the plugin's ServiceAccount token: %v", err)
	}
	u := k.base + "/apis/argoproj.io/v1alpha1/namespaces/" + url.PathEscape(namespace) + "/workflows/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	a, body, err := k.client.Do(req, "the Workflow "+namespace+"/"+name, workflowLimit)
	var re *safehttp.RedirectError
	if errors.As(err, &re) {
		// Permanent: the API server does not redirect; what did is not it.
		return nil, &apiError{Status: re.Status, Message: safehttp.ErrorText(re.Status, []byte(re.Error()), token)}
	}
	if err != nil {
		return nil, err
	}
	if !a.OK() {
		return nil, &apiError{Status: a.StatusCode, Message: safehttp.ErrorText(a.StatusCode, body, token)}
	}
	return body, nil
}
