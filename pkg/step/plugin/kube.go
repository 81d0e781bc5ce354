package plugin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/pkg/step"
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
	client    *http.Client
	tokenFile string
}

// inCluster is the client of the pod's own API server.
func inCluster() (*kube, error) { return inClusterFrom(os.Getenv, saDir) }

// inClusterFrom reads the service address from env and the CA and token
// from dir.
func inClusterFrom(env func(string) string, dir string) (*kube, error) {
	host, port := env("KUBERNETES_SERVICE_HOST"), env("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not running in a pod")
	}
	ca, err := readlimit.ReadFile(dir+"/ca.crt", readlimit.Secret)
	if err != nil {
		return nil, fmt.Errorf("the ServiceAccount's CA: %v (is automountServiceAccountToken on for the plugin?)", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s/ca.crt holds no PEM certificate", dir)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: 4}
	return &kube{base: "https://" + net.JoinHostPort(host, port), client: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		tokenFile: dir + "/token"}, nil
}

// apiError is an answer other than 200; Forbidden tells a missing
// permission from a fault worth retrying.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

func (e *apiError) permanent() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound
}

// workflow GETs one Workflow's JSON.
func (k *kube) workflow(ctx context.Context, namespace, name string) ([]byte, error) {
	token, err := readlimit.ReadFile(k.tokenFile, readlimit.Secret)
	if err != nil {
		return nil, fmt.Errorf("the plugin's ServiceAccount token: %v", err)
	}
	u := k.base + "/apis/argoproj.io/v1alpha1/namespaces/" + url.PathEscape(namespace) + "/workflows/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := readlimit.ReadAll(resp.Body, "the Workflow "+namespace+"/"+name, workflowLimit)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &apiError{Status: resp.StatusCode, Message: step.Clip(strings.TrimSpace(string(body)), 300+len("…"))}
	}
	return body, nil
}
