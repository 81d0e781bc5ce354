package deployctl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

// usageError is a command line deployctl cannot run: exit 3 (invalid
// arguments, as documented), with the command's usage line. Cobra's own
// errors would end the process with 1.
func usageError(cmd *cobra.Command, err error) error {
	use := cmd.UseLine()
	if cmd.HasAvailableSubCommands() {
		use = cmd.CommandPath() + " COMMAND [flags]"
	}
	return exitcode.With(exitcode.Invalid, fmt.Errorf("%s: %w\nusage: %s\nrun '%s --help' for more", cmd.CommandPath(), err, use, cmd.CommandPath()))
}

// missingCommand runs when a command of commands is given none of them:
// cobra would print the help and exit 0 (ignoring any argument), and a
// script would take that for success.
func missingCommand(cmd *cobra.Command, _ []string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return usageError(cmd, errors.New("missing command: one of "+strings.Join(names, ", ")))
}

// wireUsageErrors makes every usage error of root and its subcommands a
// usageError: unknown flags and bad flag values, missing or extra
// arguments, unknown commands and help topics. Cobra's help and completion
// commands are added now rather than at Execute, so they are wired too.
func wireUsageErrors(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Args = helpTopic
		}
	}
	wire(root)
}

// helpTopic accepts only the path of an existing command.
func helpTopic(c *cobra.Command, a []string) error {
	if len(a) == 0 {
		return nil
	}
	if found, rest, err := c.Root().Find(a); err != nil || len(rest) > 0 || found == c.Root() {
		return fmt.Errorf("unknown help topic %q", strings.Join(a, " "))
	}
	return nil
}

func wire(cmd *cobra.Command) {
	if !cmd.Runnable() && cmd.HasSubCommands() {
		cmd.RunE = missingCommand
	}
	cmd.SetFlagErrorFunc(usageError)
	cmd.SuggestionsMinimumDistance = 2
	args := cmd.Args
	if args == nil {
		// What cobra does without Args: a root with commands takes none.
		args = func(c *cobra.Command, a []string) error {
			if c.HasSubCommands() && len(a) > 0 {
				msg := fmt.Sprintf("unknown command %q", a[0])
				if s := c.SuggestionsFor(a[0]); len(s) > 0 {
					msg += " (did you mean " + strings.Join(s, " or ") + "?)"
				}
				return errors.New(msg)
			}
			return nil
		}
	}
	cmd.Args = func(c *cobra.Command, a []string) error {
		if err := args(c, a); err != nil {
			return usageError(c, err)
		}
		return nil
	}
	for _, sub := range cmd.Commands() {
		wire(sub)
	}
}
