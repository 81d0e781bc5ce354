package executor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// EnvironmentFile is /config/environment.yaml: what differs between the
// environments one platform spec is deployed to. Unknown fields are errors.
type EnvironmentFile struct {
	Name          string `yaml:"name" json:"name"`
	Domain        string `yaml:"domain" json:"domain"`
	GitRepository string `yaml:"gitRepository" json:"gitRepository"`
	GitRevision   string `yaml:"gitRevision" json:"gitRevision"`
	// ClusterName, when set, must be the cluster of the kubeconfig's
	// current context: a guard against deploying to the wrong cluster.
	ClusterName        string `yaml:"clusterName,omitempty" json:"clusterName,omitempty"`
	ArgoCDNamespace    string `yaml:"argocdNamespace,omitempty" json:"argocdNamespace,omitempty"`
	WorkflowsNamespace string `yaml:"workflowsNamespace,omitempty" json:"workflowsNamespace,omitempty"`
	Timeouts           struct {
		Sync   time.Duration `yaml:"sync,omitempty" json:"sync,omitempty"`
		Health time.Duration `yaml:"health,omitempty" json:"health,omitempty"`
	} `yaml:"timeouts,omitempty" json:"timeouts"`
	Retries struct {
		// MaxAttempts counts the first attempt: 1 means no retry.
		MaxAttempts int           `yaml:"maxAttempts,omitempty" json:"maxAttempts,omitempty"`
		Backoff     time.Duration `yaml:"backoff,omitempty" json:"backoff,omitempty"`
	} `yaml:"retries,omitempty" json:"retries"`
}

// readEnvironment decodes environment.yaml strictly and returns every
// problem in it, each prefixed with the file (and line where known).
func readEnvironment(path string) (*EnvironmentFile, []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", path, cleanPathError(err))}
	}
	var env EnvironmentFile
	var problems []string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	switch err := dec.Decode(&env); {
	case errors.Is(err, io.EOF):
		return nil, []string{path + ": empty file"}
	case err != nil:
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, []string{fmt.Sprintf("%s: %v", path, err)}
		}
		for _, e := range te.Errors {
			problems = append(problems, path+": "+yamlProblem(e))
		}
	}
	if err := dec.Decode(new(any)); !errors.Is(err, io.EOF) {
		problems = append(problems, path+": want exactly one YAML document")
	}
	for _, f := range []struct{ field, v string }{
		{"name", env.Name}, {"domain", env.Domain}, {"gitRepository", env.GitRepository}, {"gitRevision", env.GitRevision},
	} {
		if strings.TrimSpace(f.v) == "" {
			problems = append(problems, fmt.Sprintf("%s: %s is required", path, f.field))
		}
	}
	for _, f := range []struct{ field, v string }{
		{"argocdNamespace", env.ArgoCDNamespace}, {"workflowsNamespace", env.WorkflowsNamespace},
	} {
		if f.v == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(f.v) {
			problems = append(problems, fmt.Sprintf("%s: %s %q: %s", path, f.field, f.v, msg))
		}
	}
	if env.Timeouts.Sync < 0 || env.Timeouts.Health < 0 || env.Retries.Backoff < 0 {
		problems = append(problems, path+": durations must be positive")
	}
	if env.Retries.MaxAttempts < 0 {
		problems = append(problems, fmt.Sprintf("%s: retries.maxAttempts %d: want at least 1", path, env.Retries.MaxAttempts))
	}
	return &env, problems
}

var (
	reUnknown  = regexp.MustCompile(`^(line \d+): field (\S+) not found in type .*$`)
	reDuration = regexp.MustCompile("^(line \\d+): cannot unmarshal !!\\w+ `(.*)` into time.Duration$")
	reType     = regexp.MustCompile("^(line \\d+): cannot unmarshal !!\\w+ `(.*)` into (\\w+)$")
)

// yamlProblem turns yaml.v3's messages (which name Go types) into the
// reader's terms.
func yamlProblem(e string) string {
	if m := reUnknown.FindStringSubmatch(e); m != nil {
		return fmt.Sprintf("%s: unknown field %q", m[1], m[2])
	}
	if m := reDuration.FindStringSubmatch(e); m != nil {
		return fmt.Sprintf("%s: invalid duration %q (want e.g. 90s, 5m, 1h30m)", m[1], m[2])
	}
	if m := reType.FindStringSubmatch(e); m != nil {
		return fmt.Sprintf("%s: %q is not a valid %s", m[1], m[2], m[3])
	}
	return e
}

// cleanPathError drops the "open PATH:" prefix the caller already prints.
func cleanPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
