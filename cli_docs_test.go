package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// cliDocsDir holds the CLI reference: one page per command, generated from
// the cobra commands (go test . -run TestCLIDocs -update).
const cliDocsDir = "docs/cli"

// cliDocName is the page of a command: mnemo.md, mnemo_import.md, ...
func cliDocName(cmd *cobra.Command) string {
	return strings.ReplaceAll(cmd.CommandPath(), " ", "_") + ".md"
}

// cliDoc writes the reference page of one command.
func cliDoc(cmd *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", cmd.CommandPath(), cmd.Short)
	fmt.Fprintf(&b, "```text\n%s\n```\n\n", cmd.UseLine())
	if cmd.Long != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(cmd.Long))
	}
	if cmd.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```sh\n%s\n```\n\n", strings.TrimRight(cmd.Example, "\n"))
	}
	if fl := cmd.NonInheritedFlags(); fl.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Flags\n\n```text\n%s```\n\n", fl.FlagUsages())
	}
	if fl := cmd.InheritedFlags(); fl.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Global flags\n\n```text\n%s```\n\n", fl.FlagUsages())
	}
	var subs []*cobra.Command
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			subs = append(subs, sub)
		}
	}
	if len(subs) > 0 {
		b.WriteString("## Commands\n\n| command | what it does |\n| --- | --- |\n")
		for _, sub := range subs {
			fmt.Fprintf(&b, "| [%s](%s) | %s |\n", sub.Name(), cliDocName(sub), sub.Short)
		}
		b.WriteString("\n")
	}
	if cmd.HasParent() {
		fmt.Fprintf(&b, "See also: [%s](%s).\n", cmd.Parent().CommandPath(), cliDocName(cmd.Parent()))
	}
	return b.String()
}

// cliDocs is every page of the reference, by file name.
func cliDocs() map[string]string {
	root := newRootCommand(newApp(strings.NewReader(""), io.Discard, io.Discard))
	root.InitDefaultHelpCmd()
	pages := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		pages[cliDocName(c)] = cliDoc(c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return pages
}

// TestCLIDocs: docs/cli is the reference the commands generate; a command
// or flag changed without it fails here.
func TestCLIDocs(t *testing.T) {
	pages := cliDocs()
	if *updateGoldens {
		if err := os.RemoveAll(cliDocsDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(cliDocsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, page := range pages {
			if err := os.WriteFile(filepath.Join(cliDocsDir, name), []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(cliDocsDir)
	if err != nil {
		t.Fatalf("%v (generate it: go test . -run TestCLIDocs -update)", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		want, ok := pages[e.Name()]
		if !ok {
			t.Errorf("%s/%s documents a command that no longer exists (go test . -run TestCLIDocs -update)", cliDocsDir, e.Name())
			continue
		}
		got, err := os.ReadFile(filepath.Join(cliDocsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, []byte(want)) {
			t.Errorf("%s/%s is stale (go test . -run TestCLIDocs -update)", cliDocsDir, e.Name())
		}
	}
	sort.Strings(names)
	for name := range pages {
		if _, err := os.Stat(filepath.Join(cliDocsDir, name)); err != nil {
			t.Errorf("%s/%s is missing (go test . -run TestCLIDocs -update)", cliDocsDir, name)
		}
	}
}
