// Package inventoryflags is the command line of an inventory (import,
// plan): --manifests DIR or --live, with --live's connection flags named as
// deploystep's.
package inventoryflags

import (
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/deployctl/deployctl/pkg/resdeps"
)

// Register registers --manifests and --live, with the command's own
// usage lines, and the connection flags of --live on fs, into s; empty
// ones are taken from deploystep's environment variables when the
// inventory is opened (resdeps.SourceConfig.Open).
func Register(fs *pflag.FlagSet, s *resdeps.SourceConfig, manifestsUsage, liveUsage string) {
	fs.StringVar(&s.Manifests, "manifests", "", manifestsUsage)
	fs.BoolVar(&s.Live, "live", false, liveUsage)
	c := &s.Conn
	fs.StringVar(&c.Server, "server", "", "--live: Argo CD API host:port [ARGOCD_SERVER]")
	fs.StringVar(&c.TokenFile, "token-file", "", "--live: file holding the API token [ARGOCD_TOKEN_FILE]")
	fs.StringVar(&c.CAFile, "ca-file", "", "--live: PEM CA bundle for the server certificate [ARGOCD_CA_FILE]")
	fs.StringVar(&c.RootPath, "root-path", "", "--live: argocd-server --rootpath prefix [ARGOCD_ROOT_PATH]")
	fs.BoolVar(&c.Plaintext, "plaintext", os.Getenv("ARGOCD_PLAINTEXT") == "true", "--live: HTTP instead of HTTPS [ARGOCD_PLAINTEXT]")
	fs.BoolVar(&c.InsecureSkipVerify, "insecure-skip-verify", os.Getenv("ARGOCD_INSECURE_SKIP_VERIFY") == "true",
		"--live: accept any TLS certificate [ARGOCD_INSECURE_SKIP_VERIFY]")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 30*time.Second, "--live: deadline of every API request")
}
