// Package step is the in-step binary `deploystep`: what one Argo Workflows
// pod does for one node of the platform DAG, talking only to the Argo CD API.
//
// Reading order:
//
//	run.go        entry point: flags → command → exit code, result file, stdout line;
//	              Exec, the same run kept in memory for the plugin (package plugin)
//	termination.go the one line as the container's termination message
//	cmdline/      the command line: flags, their environment variables (docs/step-contract.md), usage
//	exitcode.go   exit codes (package exitcode) and fail, an error that carries one
//	retry.go      in-process retries of transient API faults
//	watch.go      one application's updates: watch stream, reconnects, polling fallback
//	syncwait.go   sync-and-wait: create, earlier operation, then sync and health in turn
//	operation.go  our sync requests and operations, told apart from any other;
//	              --sync-id's adoption of an earlier run's operation
//	fresh.go      the proof that a view's health is from after our operation
//	verdict.go    judging fresh health, confirming a failing one
//	checks.go     extra checks: runs them, reads resource checks (syntax, HTTP probe: package check)
//	validate.go   read-only health of many apps and their aggregate (package aggregate)
//	teardown.go   cascading delete, PVC policy, orphans
//	result.go     writing the JSON result file (its types: package stepresult)
//	summary.go    the one line on stdout, from the result
package step
