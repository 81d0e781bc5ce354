package kube

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/redact"
)

// ReadKubeconfig reads a kubeconfig file (at most readlimit.Secret), with
// its relative certificate and token paths resolved against its folder,
// and registers its credentials with secrets. Errors name the file and
// never quote its content.
func ReadKubeconfig(path string, secrets *redact.Set) (*clientcmdapi.Config, error) {
	raw, err := readlimit.ReadFile(path, readlimit.Secret)
	if err != nil {
		return nil, fmt.Errorf("%s", readlimit.Problem(path, err))
	}
	kc, err := parseKubeconfig(path, raw)
	if err != nil {
		return nil, err
	}
	setOrigin(kc, path)
	if err := clientcmd.ResolveLocalPaths(kc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	AddKubeconfigSecrets(kc, secrets)
	return kc, nil
}

// DecodeKubeconfig decodes KUBECONFIG_DATA, a base64 kubeconfig (line
// breaks allowed), whose decoded size is bounded by readlimit.Secret before
// anything is decoded, and registers the value and its credentials with
// secrets.
func DecodeKubeconfig(data string, secrets *redact.Set) (*clientcmdapi.Config, error) {
	secrets.Add(data)
	tooLarge := fmt.Errorf("KUBECONFIG_DATA: the decoded kubeconfig is larger than the %s limit", readlimit.Human(readlimit.Secret))
	enc := strings.Join(strings.Fields(data), "")
	if int64(len(enc)) > int64(base64.StdEncoding.EncodedLen(int(readlimit.Secret))) {
		return nil, tooLarge
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	switch {
	case err != nil:
		return nil, fmt.Errorf("KUBECONFIG_DATA: not valid base64 (want the kubeconfig file, base64-encoded)")
	case int64(len(raw)) > readlimit.Secret: // the last quantum's bytes past the limit
		return nil, tooLarge
	}
	kc, err := parseKubeconfig("KUBECONFIG_DATA", raw)
	if err != nil {
		return nil, err
	}
	AddKubeconfigSecrets(kc, secrets)
	return kc, nil
}

func parseKubeconfig(source string, raw []byte) (*clientcmdapi.Config, error) {
	kc, err := clientcmd.Load(raw)
	if err != nil {
		// Keep the position, never the quoted input: it may hold a token.
		return nil, fmt.Errorf("%s: not a kubeconfig: %s", source, redactErr(err))
	}
	return kc, nil
}

// AddKubeconfigSecrets registers every credential of the kubeconfig (of
// every user, not only the current context's), so no output shows one even
// when a server echoes it back.
func AddKubeconfigSecrets(kc *clientcmdapi.Config, secrets *redact.Set) {
	for _, u := range kc.AuthInfos {
		if u == nil {
			continue
		}
		secrets.Add(u.Token, u.Password, string(u.ClientKeyData), string(u.ClientCertificateData))
		if u.TokenFile != "" {
			// What client-go will send; unreadable here, it fails there.
			if b, err := readlimit.ReadFile(u.TokenFile, readlimit.Secret); err == nil {
				secrets.Add(string(b))
			}
		}
		if u.AuthProvider != nil {
			for _, v := range u.AuthProvider.Config {
				secrets.Add(v)
			}
		}
		if u.Exec != nil {
			for _, e := range u.Exec.Env {
				secrets.Add(e.Value)
			}
		}
	}
}

// RegisterSentCredentials makes every credential the clients send a known
// secret the moment it is sent: also those no file holds (a token from an
// exec plugin or an auth provider, a token file rotated since it was
// read). The wrapper is the innermost round tripper, so it sees the
// Authorization header the authentication wrappers put on the request.
func RegisterSentCredentials(rc *rest.Config, secrets *redact.Set) {
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return sentCredentials{rt: rt, secrets: secrets} })
}

type sentCredentials struct {
	rt      http.RoundTripper
	secrets *redact.Set
}

func (s sentCredentials) RoundTrip(req *http.Request) (*http.Response, error) {
	if a := req.Header.Get("Authorization"); a != "" {
		if _, cred, ok := strings.Cut(a, " "); ok { // "Bearer X", "Basic X"
			a = cred
		}
		s.secrets.Add(a)
	}
	return s.rt.RoundTrip(req)
}

// redactErr keeps a parse error's position and drops any quoted input.
func redactErr(err error) string {
	s := err.Error()
	if i := strings.IndexAny(s, "\"`'"); i > 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// setOrigin records the file every entry came from, which
// clientcmd.ResolveLocalPaths resolves relative paths against.
func setOrigin(kc *clientcmdapi.Config, file string) {
	for _, x := range kc.Clusters {
		x.LocationOfOrigin = file
	}
	for _, x := range kc.AuthInfos {
		x.LocationOfOrigin = file
	}
	for _, x := range kc.Contexts {
		x.LocationOfOrigin = file
	}
}
