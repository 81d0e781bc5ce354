package stepcontract

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/deployctl/deployctl/internal/duration"
)

// Template is a command's ClusterWorkflowTemplate as the contract sees it:
// what it takes and what it hands to deploystep and to Argo. The compiler
// adds the pod (image, volumes, security) or the plugin wrapping.
type Template struct {
	// Command is deploystep's command, and the template's name.
	Command string
	// Workflow are the workflow parameters it reads, with defaults.
	Workflow []WorkflowParam
	// Inputs are its input parameters, in order.
	Inputs []Input
	// Call is deploystep's command line and environment: the pod's
	// container args and env; the plugin's call is Call.Plugin().
	Call Call
	// Deadline is activeDeadlineSeconds ("" none); RetryLimit,
	// RetryBackoff and RetryFactor the retryStrategy's.
	Deadline, RetryLimit, RetryBackoff, RetryFactor string
}

// Input is one input parameter of a template.
type Input struct {
	Name        string
	Default     *string
	Enum        []string
	Description string
}

// Call is deploystep's command line and environment: what a pod's
// container gets, and the executor plugin's call (the template's
// plugin.deployctl, which `deploystep serve` decodes).
type Call struct {
	Args []string `json:"args"`
	Env  []EnvVar `json:"env"`
	// Node and Attempt name the workflow node, for the plugin only (the
	// agent sends no node ID): Argo fills them per node (NodeVar,
	// AttemptVar), so the plugin derives its sync id without reading the
	// node status, which Argo may have offloaded to its database.
	Node    string `json:"node,omitempty"`
	Attempt string `json:"attempt,omitempty"`
}

// NodeVar is Argo's name of the node a template runs for; in a template
// with a retryStrategy, its Retry parent's (the same for every attempt):
// executeTemplate sets node.name before it makes the attempt's node.
// AttemptVar is the attempt's number, 0 first (retryStrategy templates
// only, as every step template is).
const (
	NodeVar    = "{{node.name}}"
	AttemptVar = "{{retries}}"
)

// EnvVar is one environment variable of a Call.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// PluginName is the executor plugin's name: the key of a plugin template
// (`plugin: {deployctl: CALL}`) and of its ConfigMap.
const PluginName = "deployctl"

// Plugin is the call as the executor plugin gets it: the same, without
// the result file (the result travels in the plugin's reply), naming its
// node and attempt.
func (c Call) Plugin() Call {
	env := make([]EnvVar, 0, len(c.Env))
	for _, e := range c.Env {
		if e.Name != ResultEnv {
			env = append(env, e)
		}
	}
	return Call{Args: c.Args, Env: env, Node: NodeVar, Attempt: AttemptVar}
}

// TemplateOf renders a command's rules as its template. Only c's type
// matters: the workflow parameters its inputs default to get deploystep's
// own defaults (StepDefault) as theirs, so that the template validates
// alone; a calling WorkflowTemplate defines every one.
func TemplateOf(c Command) Template {
	t := Template{Command: c.Command(), Workflow: WorkflowParams, Call: Call{Args: []string{c.Command()}}}
	var conn Connection
	for _, p := range conn.Params() {
		if p.Reader == ByEnv {
			t.Call.Env = append(t.Call.Env, EnvVar{Name: p.EnvVar(), Value: p.source()})
		}
	}
	addWorkflow := func(name, def string) {
		for _, w := range t.Workflow {
			if w.Name == name {
				return
			}
		}
		t.Workflow = append(t.Workflow[:len(t.Workflow):len(t.Workflow)], WorkflowParam{Name: name, Default: def})
	}
	defaults := stepDefaults(c)
	for i, p := range c.Params() {
		if p.Input != "" {
			t.Inputs = append(t.Inputs, Input{Name: p.Input, Default: p.Default, Enum: p.Enum, Description: p.Description})
		}
		if p.Workflow != "" {
			def, err := defaults[i].Text()
			if err != nil {
				panic(fmt.Sprintf("%s %s: deploystep's default: %v", c.Command(), p.Name(), err))
			}
			addWorkflow(p.Workflow, def)
		}
		if p.From != "" && p.Input == "" && p.Reader.Step() {
			if name, ok := workflowParam(p.From); ok {
				addWorkflow(name, "")
			}
		}
		switch {
		case p.Global:
			// the connection's environment above carries it
		case p.Reader == ByArg:
			t.Call.Args = append(t.Call.Args, "--"+p.Flag+"="+p.source())
		case p.Reader == ByEnv:
			t.Call.Env = append(t.Call.Env, EnvVar{Name: p.EnvVar(), Value: p.source()})
		case p.Reader == ArgoDeadline:
			t.Deadline = p.source()
		case p.Reader == ArgoRetryLimit:
			t.RetryLimit = p.source()
		case p.Reader == ArgoRetryBackoff:
			t.RetryBackoff = p.source()
		case p.Reader == ArgoRetryFactor:
			t.RetryFactor = p.source()
		}
	}
	return t
}

// stepDefaults are the rules of a new value of c's type holding
// deploystep's defaults (StepDefault), in Params order.
func stepDefaults(c Command) []Param {
	v := reflect.New(reflect.TypeOf(c).Elem()).Interface().(Command)
	ps := v.Params()
	for _, p := range ps {
		if p.StepDefault != "" && p.ptr != nil {
			if err := p.SetText(p.StepDefault); err != nil {
				panic(fmt.Sprintf("%s %s: deploystep's default %q: %v", c.Command(), p.Name(), p.StepDefault, err))
			}
		}
	}
	return ps
}

// workflowParam is the name in a FromWorkflow expression.
func workflowParam(expr string) (string, bool) {
	const pre, post = "{{workflow.parameters.", "}}"
	if len(expr) > len(pre)+len(post) && expr[:len(pre)] == pre && expr[len(expr)-len(post):] == post {
		return expr[len(pre) : len(expr)-len(post)], true
	}
	return "", false
}

// Arg is one argument of a DAG task.
type Arg struct {
	Name, Value string
}

// Args are the DAG task's arguments for a command's value, in the
// template's input order: every input the value sets, except one equal to
// the input's default (the same run, a smaller WorkflowTemplate) and, for
// a rule that says so, a zero field. wf are the calling WorkflowTemplate's
// workflow parameters: an input that defaults to the platform's value of
// one (Param.Platform) is left out when the value equals it there. (Only
// those: another workflow parameter is a submission's choice, so a task
// that passes its expression leaves it out, one with a value of its own
// keeps it.)
func Args(c Command, wf map[string]string) ([]Arg, error) {
	var out []Arg
	for _, p := range c.Params() {
		if p.Input == "" || (p.ptr == nil && p.derive == nil) || (p.OmitZero && p.IsZero()) {
			continue
		}
		v, err := p.Text()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Input, err)
		}
		if p.Default != nil && *p.Default == v {
			continue
		}
		if w, ok := wf[p.Workflow]; ok && p.Platform && w == v {
			continue
		}
		out = append(out, Arg{Name: p.Input, Value: v})
	}
	return out, nil
}

// PlatformArgs are the workflow parameters a WorkflowTemplate calling c's
// template defines for it (the rules that say Platform), valued from c:
// the platform's defaults, in c's fields. Args with these leaves out every
// task argument equal to them.
func PlatformArgs(c Command) ([]Arg, error) {
	var out []Arg
	for _, p := range c.Params() {
		if !p.Platform {
			continue
		}
		v, err := p.Text()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Workflow, err)
		}
		out = append(out, Arg{Name: p.Workflow, Value: v})
	}
	return out, nil
}

// Slack is what Argo's hard limit of one attempt adds to the step's own
// limit: start-up, API retries, writing the result.
const Slack = 2 * time.Minute

// NodeLimit is how long a node's step may take: its sync timeout plus its
// health timeout (sync-and-wait's every wait; teardown's --timeout).
func NodeLimit(sync, health time.Duration) (time.Duration, error) {
	return duration.Sum(sync, health)
}

// AttemptDeadline is Argo's hard limit of one attempt of a node with these
// timeouts (activeDeadlineSeconds): NodeLimit plus Slack. The executor
// weighs an app by it.
func AttemptDeadline(sync, health time.Duration) (time.Duration, error) {
	limit, err := NodeLimit(sync, health)
	if err != nil {
		return 0, err
	}
	return withSlack(limit)
}

func withSlack(limit time.Duration) (time.Duration, error) { return duration.Sum(limit, Slack) }

// Seconds renders a duration as whole seconds (activeDeadlineSeconds).
func Seconds(d time.Duration) string {
	return strconv.FormatInt(int64(d.Round(time.Second)/time.Second), 10)
}
