// Package runflags are the flags `deployctl status` and `explain` share:
// where the run is (insight.Source) and the output format.
package runflags

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/insight"
)

// Flags are the values of the shared flags.
type Flags struct {
	insight.Source
	Output string
}

// Add registers the flags status and explain share.
func Add(fs *pflag.FlagSet) *Flags {
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

// CheckOutput refuses an output format other than text or json (exit 3).
func (f *Flags) CheckOutput() error {
	if f.Output != "text" && f.Output != "json" {
		return exitcode.With(exitcode.Invalid, errors.New("unknown output format "+f.Output+": want text or json"))
	}
	return nil
}
