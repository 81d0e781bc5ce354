// Package e2e is the end-to-end scenario of issue 5, run by `make e2e` against
// the cluster of test/e2e/up.sh: go test -tags e2e ./test/e2e/. Without the
// e2e build tag the package is empty, so `go test ./...` does not run it.
package e2e
