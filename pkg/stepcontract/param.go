package stepcontract

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deployctl/deployctl/internal/duration"
)

// Param is the rule of one parameter: where the ClusterWorkflowTemplate
// takes it from, how it reaches its reader (deploystep, or Argo), and the
// field of a command's value it binds. A Param from a command's Params
// reads and writes that value's field.
type Param struct {
	// Input is the template's input parameter carrying it, which the DAG
	// task passes; "" when the template has none (a flag the compiler
	// never sets, or a value the template takes from elsewhere: From).
	Input string
	// Default is the input's default (nil: the task must pass it). A task
	// argument equal to it is left out.
	Default *string
	// Enum restricts the input's values (Argo refuses the others).
	Enum []string
	// Description is the input's description in the template.
	Description string

	// Reader is who reads it: deploystep or Argo, and how the template
	// hands it over.
	Reader Reader
	// Flag is deploystep's flag ("" when only Argo reads it); in a
	// command's Params, the Input's name unless the rule gives another.
	Flag string
	// Env is deploystep's environment variable: EnvName(Flag) unless set.
	Env string
	// Global: deploystep takes it as a connection flag, before or after
	// the command (Connection holds it; the command's field is a copy).
	Global bool
	// From is what the template hands over: "" means the input
	// ({{inputs.parameters.Input}}); else a workflow parameter's
	// expression (FromWorkflow) or a literal.
	From string
	// StepDefault is deploystep's value when neither flag nor environment
	// gives one, in the field's text form; for a value only Argo reads
	// (the retry), the templates' own. A template lists the Workflow
	// parameter an input defaults to with it, to validate alone.
	StepDefault string
	// Usage is the flag's help text.
	Usage string
	// OmitZero leaves the task argument out when the field is its zero
	// value: the input's default then stands for it.
	OmitZero bool
	// Workflow names the workflow parameter the input defaults to: its
	// Default is FromWorkflow(Workflow), and the template lists it among
	// its workflow parameters. A task argument equal to that parameter's
	// value in the calling WorkflowTemplate is left out (Args).
	Workflow string
	// Platform: the calling WorkflowTemplate defines the Workflow
	// parameter itself, as the platform's default value of the field
	// (PlatformArgs), so only an app that differs passes it (issue 24:
	// a task's bytes count twice in every Workflow).
	Platform bool

	ptr    any                    // *string, *bool, *int, *time.Duration or *[]string; nil: a rule without a field
	derive func() (string, error) // a value computed from the other fields (the deadline)
}

// Reader is who reads a parameter, and how the template hands it over.
type Reader int

const (
	// ByArg: deploystep, as --Flag=VALUE on its command line.
	ByArg Reader = iota + 1
	// ByEnv: deploystep, as the environment variable Env.
	ByEnv
	// StepOnly: deploystep's flag, which no template sets (the compiler
	// never passes it; a person or the plugin does).
	StepOnly
	// ArgoDeadline: Argo, as the template's activeDeadlineSeconds.
	ArgoDeadline
	// ArgoRetryLimit, ArgoRetryBackoff, ArgoRetryFactor: Argo, as the
	// template's retryStrategy.
	ArgoRetryLimit
	ArgoRetryBackoff
	ArgoRetryFactor
)

// Step says whether deploystep reads it.
func (r Reader) Step() bool { return r == ByArg || r == ByEnv || r == StepOnly }

// EnvName is a command flag's environment variable: upper case, "-" → "_".
func EnvName(flag string) string {
	return strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// EnvVar is the parameter's environment variable for deploystep.
func (p Param) EnvVar() string {
	if p.Env != "" {
		return p.Env
	}
	return EnvName(p.Flag)
}

// Ptr is the bound field: *string, *bool, *int, *time.Duration or
// *[]string; nil for a rule without a field.
func (p Param) Ptr() any { return p.ptr }

// Name is how errors and tests call it: the input, else the flag.
func (p Param) Name() string {
	if p.Input != "" {
		return p.Input
	}
	if p.Flag != "" {
		return "--" + p.Flag
	}
	return p.From
}

// source is the template's expression for the value it hands over.
func (p Param) source() string {
	if p.From != "" {
		return p.From
	}
	return FromInput(p.Input)
}

// FromInput is the template expression of an input parameter.
func FromInput(name string) string { return "{{inputs.parameters." + name + "}}" }

// FromWorkflow is the template expression of a workflow parameter.
func FromWorkflow(name string) string { return "{{workflow.parameters." + name + "}}" }

// Text is the bound field's value as a task passes it: a duration as Go
// writes it, a list one item per line.
func (p Param) Text() (string, error) {
	if p.derive != nil {
		return p.derive()
	}
	switch v := p.ptr.(type) {
	case *string:
		return *v, nil
	case *bool:
		return strconv.FormatBool(*v), nil
	case *int:
		return strconv.Itoa(*v), nil
	case *time.Duration:
		return v.String(), nil
	case *[]string:
		return strings.Join(*v, "\n"), nil
	}
	return "", fmt.Errorf("%s has no value", p.Name())
}

// IsZero says whether the bound field holds its zero value.
func (p Param) IsZero() bool {
	switch v := p.ptr.(type) {
	case *string:
		return *v == ""
	case *bool:
		return !*v
	case *int:
		return *v == 0
	case *time.Duration:
		return *v == 0
	case *[]string:
		return len(*v) == 0
	}
	return true
}

// SetText reads text as Text writes it into the bound field. A list
// takes one item per line, blank lines and surrounding space dropped.
func (p Param) SetText(text string) error {
	switch v := p.ptr.(type) {
	case *string:
		*v = text
	case *bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return err
		}
		*v = b
	case *int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return err
		}
		*v = n
	case *time.Duration:
		d, err := duration.Parse(text)
		if err != nil {
			return err
		}
		*v = d
	case *[]string:
		*v = Lines(text)
	default:
		return fmt.Errorf("%s has no field to set", p.Name())
	}
	return nil
}

// Lines splits a list's text: one item per line, blank lines and
// surrounding space dropped.
func Lines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

func ptrTo(s string) *string { return &s }
