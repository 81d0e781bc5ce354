package deps

import (
	"os"
	"time"

	"github.com/spf13/pflag"
)

// LiveFlags registers the connection flags of --live on fs, with
// deploystep's names; empty ones are taken from its environment variables
// (Env).
func LiveFlags(fs *pflag.FlagSet) *LiveConfig {
	c := &LiveConfig{}
	fs.StringVar(&c.Server, "server", "", "--live: Argo CD API host:port [ARGOCD_SERVER]")
	fs.StringVar(&c.TokenFile, "token-file", "", "--live: file holding the API token [ARGOCD_TOKEN_FILE]")
	fs.StringVar(&c.CAFile, "ca-file", "", "--live: PEM CA bundle for the server certificate [ARGOCD_CA_FILE]")
	fs.StringVar(&c.RootPath, "root-path", "", "--live: argocd-server --rootpath prefix [ARGOCD_ROOT_PATH]")
	fs.BoolVar(&c.Plaintext, "plaintext", os.Getenv("ARGOCD_PLAINTEXT") == "true", "--live: HTTP instead of HTTPS [ARGOCD_PLAINTEXT]")
	fs.BoolVar(&c.InsecureSkipVerify, "insecure-skip-verify", os.Getenv("ARGOCD_INSECURE_SKIP_VERIFY") == "true",
		"--live: accept any TLS certificate [ARGOCD_INSECURE_SKIP_VERIFY]")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", 30*time.Second, "--live: deadline of every API request")
	return c
}

// Env fills what the flags left empty from deploystep's variables.
func (c LiveConfig) Env() LiveConfig {
	for _, f := range []struct {
		v   *string
		env string
	}{{&c.Server, "ARGOCD_SERVER"}, {&c.TokenFile, "ARGOCD_TOKEN_FILE"}, {&c.CAFile, "ARGOCD_CA_FILE"}, {&c.RootPath, "ARGOCD_ROOT_PATH"}} {
		if *f.v == "" {
			*f.v = os.Getenv(f.env)
		}
	}
	return c
}
