package resdeps

import "os"

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
