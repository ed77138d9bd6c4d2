package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// usageHint is a usage error that knows what its command takes. The error
// line names the usage; on a terminal the lines after it add the command's
// arguments, flags and help pointer (docs/spec/cli.md section 3 keeps the error itself
// one line, for scripts).
type usageHint struct {
	err  error
	hint string
}

func (u usageHint) Error() string { return u.err.Error() }
func (u usageHint) Unwrap() error { return u.err }

// commandUsageError is a usage error of cmd: msg, the usage line, and a hint.
func commandUsageError(cmd *cobra.Command, msg string) error {
	err := usageError(msg + "; usage: " + cmd.UseLine())
	return usageHint{err: err, hint: usageText(cmd, msg)}
}

// usageText is what cmd takes: its arguments (and their values where the
// command knows them), its flags and where the help is.
func usageText(cmd *cobra.Command, msg string) string {
	var b strings.Builder
	args := argNames(cmd)
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		upper := strings.ToUpper(name)
		for _, a := range args {
			if a == upper {
				fmt.Fprintf(&b, "%s is an argument, not a flag: %s %s\n", a, cmd.CommandPath(), exampleArg(cmd, a))
			}
		}
		if s := similarFlags(cmd, name); len(s) > 0 {
			fmt.Fprintf(&b, "Did you mean %s?\n", strings.Join(s, " or "))
		}
	}
	if choices := argChoices(cmd); len(choices) > 0 && len(args) > 0 {
		fmt.Fprintf(&b, "%s is one of: %s\n", args[0], strings.Join(choices, ", "))
	}
	if flags := cmd.NonInheritedFlags(); flags.HasAvailableFlags() {
		b.WriteString("Flags:\n" + flags.FlagUsages())
	}
	fmt.Fprintf(&b, "Run \"%s --help\" for more.\n", cmd.CommandPath())
	return b.String()
}

// argNames are the positional arguments of a command's use line: its
// upper-case words (ID..., FACET, FILE|-).
func argNames(cmd *cobra.Command) []string {
	var names []string
	for _, w := range strings.Fields(cmd.Use)[1:] {
		w = strings.Trim(w, "[]().")
		if w != "" && w == strings.ToUpper(w) && !strings.HasPrefix(w, "-") && strings.ContainsAny(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			names = append(names, w)
		}
	}
	return names
}

// exampleArg is a value for argument a: the command's first valid argument
// for its first positional, else the argument's name.
func exampleArg(cmd *cobra.Command, a string) string {
	if args, choices := argNames(cmd), argChoices(cmd); len(args) > 0 && args[0] == a && len(choices) > 0 {
		return choices[0]
	}
	return a
}

// argChoicesAnnotation names, on a command whose first argument completes
// dynamically, its values (comma-separated) for the usage hint.
const argChoicesAnnotation = "mnemo-arg-choices"

// argChoices are the values of a command's first argument, when it has a fixed set.
func argChoices(cmd *cobra.Command) []string {
	if len(cmd.ValidArgs) > 0 {
		return cmd.ValidArgs
	}
	if v := cmd.Annotations[argChoicesAnnotation]; v != "" {
		return strings.Split(v, ", ")
	}
	return nil
}

// similarFlags are cmd's flags that the mistyped name starts, or that start it
// (--lim for --limit, --filters for --filter).
func similarFlags(cmd *cobra.Command, name string) []string {
	var out []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || len(name) < 2 {
			return
		}
		if strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name) {
			out = append(out, "--"+f.Name)
		}
	})
	return out
}

// unknownCommandError adds cobra's suggestions to an unknown command.
func unknownCommandError(root *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, root.CommandPath())
	if s := root.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usageHint{err: usageError(msg), hint: fmt.Sprintf("Run \"%s --help\" for the commands.\n", root.CommandPath())}
}
