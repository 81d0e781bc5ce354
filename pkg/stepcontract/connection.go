package stepcontract

import "time"

// Connection is how deploystep reaches Argo CD: the flags every command
// takes, before or after the command. The templates set them from the
// workflow's parameters (WorkflowParams), the task's app-namespace, or a
// fixed path.
type Connection struct {
	Server             string
	AppNamespace       string
	Plaintext          bool
	InsecureSkipVerify bool
	RootPath           string
	TokenFile          string
	CAFile             string
	ResultFile         string
	RequestTimeout     time.Duration
}

// Paths the templates mount and write, and deploystep's defaults.
const (
	TokenFile  = "/var/run/secrets/argocd/token"
	ResultFile = "/tmp/deploystep/result.json"
	// ResultEnv is the result file's variable: the plugin rendering
	// leaves it out (the result travels in the plugin's reply).
	ResultEnv = "RESULT_FILE"
)

// Params are the connection's rules, in the order the templates set the
// environment.
func (c *Connection) Params() []Param {
	return []Param{
		{Reader: ByEnv, Flag: "server", Env: "ARGOCD_SERVER", From: FromWorkflow("argocd-server"), Usage: "Argo CD API host:port", ptr: &c.Server},
		{Reader: ByEnv, Flag: "app-namespace", Env: "ARGOCD_APP_NAMESPACE", From: FromInput(InputAppNamespace), Usage: "namespace of the Application objects", ptr: &c.AppNamespace},
		{Reader: ByEnv, Flag: "plaintext", Env: "ARGOCD_PLAINTEXT", From: FromWorkflow("argocd-plaintext"), StepDefault: "false", Usage: "HTTP instead of HTTPS", ptr: &c.Plaintext},
		{Reader: ByEnv, Flag: "insecure-skip-verify", Env: "ARGOCD_INSECURE_SKIP_VERIFY", From: FromWorkflow("argocd-insecure-skip-verify"), StepDefault: "false", Usage: "accept any TLS certificate", ptr: &c.InsecureSkipVerify},
		{Reader: ByEnv, Flag: "root-path", Env: "ARGOCD_ROOT_PATH", From: FromWorkflow("argocd-root-path"), Usage: "argocd-server --rootpath prefix", ptr: &c.RootPath},
		{Reader: ByEnv, Flag: "token-file", Env: "ARGOCD_TOKEN_FILE", From: TokenFile, StepDefault: TokenFile, Usage: "file holding the API token", ptr: &c.TokenFile},
		{Reader: ByEnv, Flag: "ca-file", Env: "ARGOCD_CA_FILE", From: FromWorkflow("argocd-ca-file"), Usage: "PEM CA bundle for the server certificate", ptr: &c.CAFile},
		{Reader: ByEnv, Flag: "result-file", Env: ResultEnv, From: ResultFile, StepDefault: ResultFile, Usage: "where the JSON result is written", ptr: &c.ResultFile},
		{Reader: StepOnly, Flag: "request-timeout", Env: "REQUEST_TIMEOUT", StepDefault: "30s", Usage: "deadline of every API request", ptr: &c.RequestTimeout},
	}
}

// WorkflowParam is a workflow-level parameter a template reads, with the
// default that lets the template validate on its own (a calling workflow
// sets every one).
type WorkflowParam struct {
	Name, Default string
}

// WorkflowParams are the connection's workflow parameters, which every
// template reads and every WorkflowTemplate defines (from the spec): how
// to reach Argo CD, and the Secrets the pods mount.
var WorkflowParams = []WorkflowParam{
	{"argocd-server", "argocd-server.argocd.svc:443"},
	{WorkflowArgoCDNamespace, "argocd"},
	{"argocd-plaintext", "false"},
	{"argocd-insecure-skip-verify", "false"},
	{"argocd-root-path", ""},
	{WorkflowTokenSecret, "deployctl-argocd-token"},
	{WorkflowTokenKey, "token"},
	{WorkflowCASecret, "deployctl-argocd-ca"},
	{WorkflowCAKey, "ca.crt"},
	{"argocd-ca-file", ""},
}

// The Secrets' workflow parameters: the pod templates' volumes read them.
const (
	WorkflowTokenSecret = "token-secret"
	WorkflowTokenKey    = "token-key"
	WorkflowCASecret    = "ca-secret"
	WorkflowCAKey       = "ca-key"
)
