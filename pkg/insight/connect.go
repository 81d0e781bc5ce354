package insight

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Source is where status and explain read the run from: the cluster, the
// namespace and the workflow.
type Source struct {
	Kubeconfig      string
	Context         string
	Namespace       string
	Platform        string
	Spec            string
	ArgoCDNamespace string
}

// Load connects and reads the run (the named workflow, or the latest).
func (f *Source) Load(ctx context.Context, workflow string) (*Run, error) {
	o := Options{Namespace: f.Namespace, Platform: f.Platform, Workflow: workflow, ArgoCDNamespace: f.ArgoCDNamespace,
		Secrets: &redact.Set{}}
	if f.Spec != "" {
		p, err := spec.LoadFile(f.Spec)
		if err != nil {
			return nil, o.Secrets.Error(err) // a repoURL with a password may be quoted
		}
		o.Namespace = or(o.Namespace, p.Spec.Workflow.Namespace)
		o.Platform = or(o.Platform, p.Metadata.Name)
	}
	o.Namespace = or(o.Namespace, "argo")
	cl, err := f.clients(o.Secrets)
	if err != nil {
		return nil, o.Secrets.Error(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return Load(ctx, cl, o)
}

// clients uses the executor's client set. The kubeconfig comes from the
// flag, or the executor's variables (KUBECONFIG_PATH, KUBECONFIG_DATA), or,
// these commands being read-only and for people, kubectl's usual places.
// Every file is read bounded (readlimit.Secret, exit 3 over it), and the
// credentials found are registered with secrets: the output masks them.
func (f *Source) clients(secrets *redact.Set) (*kube.Clients, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	var cc clientcmd.ClientConfig
	path := or(f.Kubeconfig, os.Getenv("KUBECONFIG_PATH"))
	switch data := os.Getenv("KUBECONFIG_DATA"); {
	case path != "":
		kc, err := kube.ReadKubeconfig(path, secrets)
		if err != nil {
			return nil, exitcode.With(exitcode.Invalid, err)
		}
		cc = clientcmd.NewDefaultClientConfig(*kc, overrides)
	case data != "":
		kc, err := kube.DecodeKubeconfig(data, secrets)
		if err != nil {
			return nil, exitcode.With(exitcode.Invalid, err)
		}
		cc = clientcmd.NewDefaultClientConfig(*kc, overrides)
	default:
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if err := boundedFiles(rules.GetLoadingPrecedence()); err != nil {
			return nil, exitcode.With(exitcode.Invalid, err)
		}
		cc = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
		if raw, err := cc.RawConfig(); err == nil {
			kube.AddKubeconfigSecrets(&raw, secrets)
		}
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	secrets.Add(rc.BearerToken, rc.Password, string(rc.KeyData))
	kube.RegisterSentCredentials(rc, secrets)
	rc.UserAgent = "deployctl/insight"
	// The API server's warnings, masked, rather than klog's unmasked line.
	rc.WarningHandler = rest.NewWarningWriter(secrets.Writer(os.Stderr), rest.WarningWriterOptions{Deduplicate: true})
	rc.Timeout = kube.RequestTimeout
	return kube.NewClients(rc)
}

// boundedFiles refuses, before client-go reads them whole, the kubeconfig
// files over readlimit.Secret or that are not regular files (a device or a
// pipe would be read without end).
func boundedFiles(paths []string) error {
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue // absent: client-go skips it, or says so
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s: not a regular file", p)
		case fi.Size() > readlimit.Secret:
			return &readlimit.TooLargeError{Name: p, Limit: readlimit.Secret}
		}
	}
	return nil
}
