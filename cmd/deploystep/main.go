// Command deploystep is the in-step binary the deployctl workflow templates
// run in every pod: sync-and-wait, validate and teardown of one node through
// the Argo CD API. See docs/step-contract.md and package step.
package main

import (
	"os"

	"github.com/deployctl/deployctl/pkg/step"
)

func main() {
	os.Exit(step.Main(os.Args[1:]))
}
