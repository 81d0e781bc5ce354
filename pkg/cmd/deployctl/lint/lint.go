// Package lint implements `deployctl lint`: validate spec files.
package lint

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/generate"
)

// NewCommand returns `deployctl lint FILE…`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "lint FILE...",
		Short: "Validate platform specs: schema, names, dependencies, cycles; warn about redundant edges",
		Long: `lint checks every file completely and reports every problem with its file,
line and field. It exits 0 when all files are valid (warnings allowed) and 3
otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := 0
			for _, f := range args {
				d, err := dag.Load(f)
				if err != nil {
					failed++
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					continue
				}
				// The one check that needs the compiled output: the size of
				// each generated object. Running it here keeps lint the
				// whole truth about what generate will accept.
				if _, _, err := generate.Tree(d, "platform"); err != nil {
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", f, err)
					continue
				}
				for _, w := range d.Redundant() {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
				}
				mode := ""
				if d.Platform.Spec.Workflow.StepMode.Plugin() {
					mode = "; steps in the executor plugin: the workflow controller needs ARGO_EXECUTOR_PLUGINS=true (deployctl preflight checks)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%d apps, %d stacks%s)\n", f, len(d.Apps()), len(d.Stacks()), mode)
			}
			if failed > 0 {
				return exitcode.With(exitcode.Invalid, errors.New(plural(failed)))
			}
			return nil
		},
	}
}

func plural(n int) string {
	if n == 1 {
		return "1 file is invalid"
	}
	return fmt.Sprintf("%d files are invalid", n)
}
