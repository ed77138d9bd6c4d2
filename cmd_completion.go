package main

import (
	"github.com/spf13/cobra"

	"mnemo/contract"
)

func newCompletionCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: `Print the completion script for a shell. For example:

  mnemo completion bash > ~/.local/share/bash-completion/completions/mnemo
  mnemo completion zsh > "${fpath[1]}/_mnemo"
  mnemo completion fish > ~/.config/fish/completions/mnemo.fish`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(a.stdout, true)
			case "zsh":
				return root.GenZshCompletion(a.stdout)
			case "fish":
				return root.GenFishCompletion(a.stdout, true)
			}
			return contract.Invalid("no completion for shell `%s`; choose bash, zsh or fish", args[0])
		},
	}
}
