package executor

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/internal/safeyaml"
	"github.com/deployctl/deployctl/pkg/report"
)

// readEnvironment decodes environment.yaml strictly and returns every
// problem in it, each prefixed with the file (and line where known), and
// the line of each field ("timeouts.sync": 7), so an override the spec's
// rules refuse is located here. A password in gitRepository is registered
// with secrets (and refused).
func readEnvironment(path string, secrets *redact.Set) (env *report.EnvironmentFile, lines map[string]int, problems []string) {
	data, err := readlimit.ReadFile(path, readlimit.Spec)
	if err != nil {
		return nil, nil, []string{readlimit.Problem(path, err)}
	}
	// Decoded in two steps: the node tree first, where duplicate keys and
	// unknown fields are found with their lines (yaml.v3's strict decoder
	// gives up on a mapping at its first duplicate key, leaving every other
	// field of it unread and reported missing), then the fields.
	dec := safeyaml.NewDecoder(data)
	root, err := dec.Next()
	switch {
	case errors.Is(err, io.EOF):
		return nil, nil, []string{path + ": empty file"}
	case err != nil:
		return nil, nil, []string{fmt.Sprintf("%s: %v", path, err)}
	}
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	switch {
	case doc.Kind == yaml.ScalarNode && doc.Tag == "!!null":
		return nil, nil, []string{path + ": empty file"}
	case doc.Kind != yaml.MappingNode:
		return nil, nil, []string{fmt.Sprintf("%s: line %d: want a mapping of fields (name, domain, gitRepository, gitRevision, …)", path, doc.Line)}
	}
	problems = checkKeys(path, doc, reflect.TypeOf(report.EnvironmentFile{}))
	lines = fieldLines(doc, "")
	env = &report.EnvironmentFile{}
	if err := doc.Decode(env); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, nil, append(problems, fmt.Sprintf("%s: %v", path, err))
		}
		for _, e := range te.Errors {
			problems = append(problems, path+": "+yamlProblem(e))
		}
	}
	if _, err := dec.Next(); !errors.Is(err, io.EOF) {
		problems = append(problems, path+": want exactly one YAML document")
	}
	for _, f := range []struct{ field, v string }{
		{"name", env.Name}, {"domain", env.Domain}, {"gitRepository", env.GitRepository}, {"gitRevision", env.GitRevision},
	} {
		if strings.TrimSpace(f.v) == "" {
			problems = append(problems, fmt.Sprintf("%s: %s is required", path, f.field))
		}
	}
	problems = append(problems, checkEnvironmentValues(path, env, secrets)...)
	if env.Timeouts.Sync < 0 || env.Timeouts.Health < 0 || env.Retries.Backoff < 0 {
		problems = append(problems, path+": durations must be positive")
	}
	if env.Retries.MaxAttempts < 0 {
		problems = append(problems, fmt.Sprintf("%s: retries.maxAttempts %d: want at least 1", path, env.Retries.MaxAttempts))
	}
	return env, lines, problems
}

// fieldLines records the line of every key of n, by its dotted path.
func fieldLines(n *yaml.Node, prefix string) map[string]int {
	lines := map[string]int{}
	if n.Kind != yaml.MappingNode {
		return lines
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := prefix + n.Content[i].Value
		lines[k] = n.Content[i].Line
		for sub, l := range fieldLines(n.Content[i+1], k+".") {
			lines[sub] = l
		}
	}
	return lines
}

// checkKeys reports the duplicate keys (and drops them, the first one
// kept, so the rest decodes) and the keys of no field of t, recursively.
func checkKeys(path string, n *yaml.Node, t reflect.Type) []string {
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return nil
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	var problems []string
	first := map[string]int{}
	keep := make([]*yaml.Node, 0, len(n.Content))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if line, dup := first[k.Value]; dup {
			problems = append(problems, fmt.Sprintf("%s: line %d: duplicate key %q (first at line %d)", path, k.Line, k.Value, line))
			continue
		}
		first[k.Value] = k.Line
		keep = append(keep, k, v)
		if k.Value == "<<" { // a merge key: its fields are checked when decoded
			continue
		}
		ft, ok := fields[k.Value]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: line %d: unknown field %q", path, k.Line, k.Value))
			continue
		}
		problems = append(problems, checkKeys(path, v, ft)...)
	}
	n.Content = keep
	return problems
}

// checkEnvironmentValues checks each value against the rule of where it
// goes: namespaces are DNS-1123 labels (Kubernetes), the domain a DNS-1123
// subdomain, gitRepository a Git URL without a password (Argo CD reads
// credentials from its repository Secrets; a password here would sit in a
// ConfigMap and in every report), gitRevision a Git revision that no tool
// reads as an option, clusterName a kubeconfig cluster name (printable, no
// surrounding space).
func checkEnvironmentValues(path string, env *report.EnvironmentFile, secrets *redact.Set) []string {
	var problems []string
	bad := func(field, value, msg string) {
		problems = append(problems, fmt.Sprintf("%s: %s %q: %s", path, field, value, msg))
	}
	for _, f := range []struct{ field, v string }{
		{"argocdNamespace", env.ArgoCDNamespace}, {"workflowsNamespace", env.WorkflowsNamespace},
	} {
		if f.v == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(f.v) {
			bad(f.field, f.v, msg)
		}
	}
	if env.Domain != "" {
		for _, msg := range validation.IsDNS1123Subdomain(env.Domain) {
			bad("domain", env.Domain, msg)
		}
	}
	if env.GitRepository != "" {
		if u, err := url.Parse(env.GitRepository); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok {
				secrets.Add(p, u.User.String())
			}
		}
		if msg := checkGitURL(env.GitRepository); msg != "" {
			bad("gitRepository", redact.URL(env.GitRepository), msg)
		}
	}
	if r := env.GitRevision; r != "" {
		if strings.HasPrefix(r, "-") || strings.ContainsFunc(r, badRevisionRune) || strings.Contains(r, "..") {
			bad("gitRevision", r, "want a branch, tag or commit (no spaces, control characters, ~ ^ : ? * [ \\ or .., not starting with -)")
		}
	}
	if n := env.ClusterName; n != "" {
		if len(n) > 253 || strings.TrimSpace(n) != n || strings.ContainsFunc(n, unicode.IsControl) {
			bad("clusterName", n, "want the kubeconfig's cluster name: at most 253 characters, no control characters or surrounding spaces")
		}
	}
	return problems
}

func badRevisionRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("~^:?*[\\", r)
}

// scpLike is Git's scp-like address [user@]host:path.
var scpLike = regexp.MustCompile(`^(?:[A-Za-z0-9._~-]+@)?[A-Za-z0-9.-]+:\S+$`)

// checkGitURL accepts the addresses Git and Argo CD clone from:
// https://, http://, ssh://, git:// and file:// URLs, and scp-like
// [user@]host:path; never a password in the URL.
func checkGitURL(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return "spaces or control characters in a repository URL"
	}
	if !strings.Contains(s, "://") {
		if scpLike.MatchString(s) {
			return ""
		}
		return "want a Git URL: https://HOST/PATH, ssh://[USER@]HOST/PATH, git://, file:// or USER@HOST:PATH"
	}
	u, err := url.Parse(s)
	if err != nil {
		return "not a URL: " + redact.String(err.Error())
	}
	switch u.Scheme {
	case "https", "http", "ssh", "git":
		if u.Host == "" {
			return "no host"
		}
	case "file":
		if u.Path == "" {
			return "no path"
		}
	default:
		return fmt.Sprintf("scheme %q: want https, http, ssh, git or file", u.Scheme)
	}
	if _, ok := u.User.Password(); ok {
		return "holds a password: keep credentials in Argo CD's repository Secret (or the secrets directory), never in environment.yaml"
	}
	return ""
}

var (
	reDuration = regexp.MustCompile("^(line \\d+): cannot unmarshal !!\\w+ `(.*)` into time.Duration$")
	reType     = regexp.MustCompile("^(line \\d+): cannot unmarshal !!\\w+ `(.*)` into (\\w+)$")
)

// yamlProblem turns yaml.v3's messages (which name Go types) into the
// reader's terms.
func yamlProblem(e string) string {
	if m := reDuration.FindStringSubmatch(e); m != nil {
		return fmt.Sprintf("%s: invalid duration %q (want e.g. 90s, 5m, 1h30m)", m[1], m[2])
	}
	if m := reType.FindStringSubmatch(e); m != nil {
		return fmt.Sprintf("%s: %q is not a valid %s", m[1], m[2], m[3])
	}
	return e
}
