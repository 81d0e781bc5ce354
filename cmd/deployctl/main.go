// Command deployctl compiles a platform DAG spec into Argo Workflows and runs
// it: lint, plan, generate, and the executor's deploy, validate, teardown.
package main

import (
	"fmt"
	"os"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

func main() {
	if err := deployctl.NewCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitcode.Of(err))
	}
}
