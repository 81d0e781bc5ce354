package insight

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deployctl/deployctl/pkg/executor"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Flags are how status and explain find the run: the cluster, the
// namespace and the workflow.
type Flags struct {
	Kubeconfig      string
	Context         string
	Namespace       string
	Platform        string
	Spec            string
	ArgoCDNamespace string
	Output          string
}

// AddFlags registers the flags status and explain share.
func AddFlags(fs *pflag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig file (default KUBECONFIG_PATH, KUBECONFIG_DATA, then kubectl's KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Context, "context", "", "kubeconfig context (default its current context)")
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "the workflows' namespace (default the spec's, else argo)")
	fs.StringVar(&f.Platform, "platform", "", "without a workflow name: the latest run of this platform (default the spec's, else any)")
	fs.StringVar(&f.Spec, "spec", "", "a platform spec: its workflow namespace and platform name")
	fs.StringVar(&f.ArgoCDNamespace, "argocd-namespace", "", "Argo CD's namespace (default the run's argocd-namespace parameter)")
	fs.StringVarP(&f.Output, "output", "o", "text", "text or json")
	return f
}

// Load connects and reads the run (the named workflow, or the latest).
func (f *Flags) Load(ctx context.Context, workflow string) (*Run, error) {
	o := Options{Namespace: f.Namespace, Platform: f.Platform, Workflow: workflow, ArgoCDNamespace: f.ArgoCDNamespace}
	if f.Spec != "" {
		p, err := spec.LoadFile(f.Spec)
		if err != nil {
			return nil, err
		}
		o.Namespace = or(o.Namespace, p.Spec.Workflow.Namespace)
		o.Platform = or(o.Platform, p.Metadata.Name)
	}
	o.Namespace = or(o.Namespace, "argo")
	cl, err := f.clients()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return Load(ctx, cl, o)
}

// clients uses the executor's client set. The kubeconfig comes from the
// flag, or the executor's variables (KUBECONFIG_PATH, KUBECONFIG_DATA), or,
// these commands being read-only and for people, kubectl's usual places.
func (f *Flags) clients() (*executor.Clients, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	var cc clientcmd.ClientConfig
	path := or(f.Kubeconfig, os.Getenv("KUBECONFIG_PATH"))
	switch data := os.Getenv("KUBECONFIG_DATA"); {
	case path != "":
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
		cc = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	case data != "":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return nil, fmt.Errorf("KUBECONFIG_DATA: not valid base64")
		}
		kc, err := clientcmd.Load(raw)
		if err != nil {
			return nil, fmt.Errorf("KUBECONFIG_DATA: not a kubeconfig")
		}
		cc = clientcmd.NewDefaultClientConfig(*kc, overrides)
	default:
		cc = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), overrides)
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	rc.UserAgent = "deployctl/insight"
	rc.Timeout = 30 * time.Second
	return executor.NewClients(rc)
}
