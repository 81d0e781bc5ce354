// Package generate implements `deployctl generate`: the product's main job.
package generate

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/internal/atomicfile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/generate"
	"github.com/deployctl/deployctl/pkg/render"
)

// NewCommand returns `deployctl generate FILE -o DIR`.
func NewCommand() *cobra.Command {
	var out, scope string
	cmd := &cobra.Command{
		Use:   "generate FILE",
		Short: "Compile a platform spec into Argo Workflows, Argo CD and bootstrap manifests",
		Long: `generate writes the platform's whole tree into DIR (default
generated/<platform>): deploy, teardown and validate WorkflowTemplates and
Workflows, the reusable ClusterWorkflowTemplates, the Argo CD Applications,
RBAC, Argo CD health customizations, Argo Events triggers and the Ansible
bootstrap. The output is deterministic; commit it. DIR is replaced as a
whole, and nothing is written if anything fails.

DIR is only ever replaced when generate wrote it: it holds the marker file
.deployctl-generated naming the same platform. A non-empty folder without it,
another platform's tree, the current folder or one above it, a folder
holding the spec, a file, a symbolic link or a device: exit 3, nothing
touched. What an interrupted run left behind is cleaned up (or put back)
by the next one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := dag.Load(args[0])
			if err != nil {
				// Report a bad -o too, in the same pass.
				if out != "" {
					err = errors.Join(err, render.CheckOutput(out, args))
				}
				return exitcode.With(exitcode.Invalid, err)
			}
			tree, o, err := generate.Tree(d, scope)
			if err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			dir := out
			if dir == "" {
				dir = filepath.Join("generated", d.Platform.Metadata.Name)
			}
			notes, err := tree.Write(dir, render.WriteOptions{Platform: d.Platform.Metadata.Name, Keep: args})
			for _, n := range notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
			}
			if atomicfile.IsRefused(err) {
				return exitcode.With(exitcode.Invalid, err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: wrote %d files to %s (%d apps, spec hash %s)\n", args[0], len(tree), dir, len(o.Applications), o.SpecHash)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output directory (default generated/<platform>)")
	cmd.Flags().StringVar(&scope, "scope", "platform", "platform, stack:NAME or app:NAME")
	return cmd
}
