// Package plugin is `deploystep serve`: the Argo Workflows executor plugin
// that runs deployctl's steps without a pod each (issue 15,
// docs/step-contract.md "Plugin mode"). The one agent pod of a workflow
// runs it as a sidecar and POSTs every plugin node's template to it; each
// node runs in a goroutine the same code the pod runs (step.Exec), and every
// call answers the node's current state at once.
//
// Reading order:
//
//	serve.go     the command: flags, listener, graceful shutdown
//	server.go    HTTP: bearer token, bounded body, the one route, replies
//	template.go  the request: the workflow, the template, its args and env
//	jobs.go      one job per (workflow uid, template): the table, its cap, exit code → node phase
//	identity.go  the workflow node a job runs for, and its sync id
//	kube.go      a small in-cluster client: GET one Workflow
//
// Standard library only: deploystep links it.
package plugin
