// Command deploystep is the in-step binary the deployctl workflow templates
// run in every pod: sync-and-wait, validate and teardown of one node through
// the Argo CD API; `deploystep serve` runs the same steps as an Argo
// Workflows executor plugin. See docs/step-contract.md, packages step and
// step/plugin.
package main

import (
	"os"

	"github.com/deployctl/deployctl/pkg/step"
	"github.com/deployctl/deployctl/pkg/step/plugin"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(plugin.Main(os.Args[2:]))
	}
	os.Exit(step.Main(os.Args[1:]))
}
