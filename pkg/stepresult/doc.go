// Package stepresult is the in-step binary's result file
// (docs/step-contract.md, "Output"): the types `deploystep` writes, the
// outcome word of each exit code, and the one reading of a result that the
// executor's report and `deployctl status|explain` share.
//
// It uses the standard library only (and the stdlib-only helpers
// internal/redact and pkg/exitcode), so the step binary
// stays small.
//
//	write.go  Header, SyncResult, ValidateResult, TeardownResult, Issue: what the step writes
//	read.go   Result, Parse, Diagnostics: what a reader keeps of a result and how it words a failure
package stepresult
