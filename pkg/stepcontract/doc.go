// Package stepcontract is the contract between the compiler and the in-step
// binary (deploystep), declared once: one Go type per step command
// (SyncAndWait, Validate, Teardown; the GitOps handoff is a sync-and-wait
// of the root Application), whose fields are the command's parameters, and
// Connection, the flags every command takes.
//
// Each field has one rule (Param): the ClusterWorkflowTemplate input that
// carries it, how the template hands it to the step (a flag on the command
// line, or an environment variable) or to Argo (activeDeadlineSeconds,
// retryStrategy), its default, and the field it binds. From those rules
// come every rendering:
//
//   - the DAG task's arguments (Args), which the compiler writes;
//   - the ClusterWorkflowTemplate's inputs, workflow parameters, command
//     line and environment (TemplateOf), which the compiler turns into the
//     pod template, and the executor plugin's call (Call: the same command
//     line and environment, for `deploystep serve`): pod and plugin mode
//     are two renderings of one value;
//   - deploystep's flags and environment variables (Bind), which
//     pkg/step/cmdline parses.
//
// The per-attempt limits are computed here once (NodeLimit, AttemptDeadline),
// and the names the readers use (insight, livestate, the executor) are the
// constants below the rules. Adding a parameter is one field and its rule;
// the round-trip test (pkg/compile: compile → template → parse → the same
// value, both step modes) fails for a field without one.
//
// Standard library only (and internal/duration): deploystep links it.
package stepcontract
