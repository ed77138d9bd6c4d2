package main

import (
	"mnemo/cliout"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for the mnemo binary, so the shells'
// completion scripts can call it (`mnemo __complete ...`) as they call mnemo.
func TestMain(m *testing.M) {
	if os.Getenv("MNEMO_TEST_AS_CLI") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// shellEnv is an environment in which `mnemo` on PATH is this test binary,
// on the fixture store.
func shellEnv(t *testing.T, c *testCLI) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(c.home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "mnemo")); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "MNEMO_TEST_AS_CLI=1", "MNEMO_DB=" + c.db, "HOME=" + c.home}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"} {
		env = append(env, k+"="+os.Getenv(k))
	}
	return env
}

// complete asks a shell, through the script `mnemo completion SHELL` prints,
// for the completions of line, and returns the words it offers.
func complete(t *testing.T, c *testCLI, shell, line string) []string {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s is not installed", shell)
	}
	words := strings.Fields(line)
	if strings.HasSuffix(line, " ") {
		words = append(words, "")
	}
	var script string
	switch shell {
	case "bash":
		const lib = "/usr/share/bash-completion/bash_completion"
		if _, err := os.Stat(lib); err != nil {
			t.Skip("bash-completion is not installed")
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = cliout.ShellQuote(w)
		}
		script = `source ` + lib + `
source <(mnemo completion bash)
compopt() { :; } # only valid while bash itself runs a completion
COMP_WORDS=(` + strings.Join(quoted, " ") + `)
COMP_CWORD=` + itoa(len(words)-1) + `
COMP_LINE=` + cliout.ShellQuote(line) + `
COMP_POINT=${#COMP_LINE}
__start_mnemo
printf '%s\n' "${COMPREPLY[@]}"`
	case "zsh":
		// The script runs as zsh's completion system calls it; only the
		// system's output builtins are stood in for, printing what they get.
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = cliout.ShellQuote(w)
		}
		script = `compdef() { :; }
compadd() { :; }
_describe() { print -rl -- "${completions[@]}"; }
source <(mnemo completion zsh)
words=(` + strings.Join(quoted, " ") + `)
CURRENT=` + itoa(len(words)) + `
_mnemo`
	case "fish":
		script = `mnemo completion fish | source
complete -C ` + cliout.ShellQuote(line)
	}
	cmd := exec.Command(path, "-c", script)
	if shell == "zsh" {
		cmd = exec.Command(path, "-f", "-c", script)
	}
	cmd.Env = shellEnv(t, c)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil || errOut.Len() > 0 {
		t.Fatalf("%s: %v\n%s%s", shell, err, out, errOut.String())
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// Each shell shows a description after the value: bash after
		// spaces and a parenthesis, zsh after a colon (values escape
		// theirs), fish after a tab.
		l, _, _ = strings.Cut(l, "\t")
		if shell == "bash" {
			l, _, _ = strings.Cut(l, "  (")
		}
		if shell == "zsh" {
			l = strings.ReplaceAll(splitUnescaped(l), `\:`, ":")
		}
		if l = strings.TrimSpace(l); l != "" {
			got = append(got, l)
		}
	}
	return got
}

// splitUnescaped cuts a zsh _describe entry at its first unescaped colon.
func splitUnescaped(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == ':' {
			return s[:i]
		}
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestShellCompletionKnowsTheStore(t *testing.T) {
	c := newFixtureCLI(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			facets := complete(t, c, shell, "mnemo explore ")
			for _, f := range facetNames() {
				if !slices.Contains(facets, f) {
					t.Errorf("explore completes %v, missing the facet %s", facets, f)
				}
			}
			if got := complete(t, c, shell, "mnemo narrow ta"); !slices.Equal(got, []string{"tag"}) {
				t.Errorf("narrow ta completes %v, want [tag]", got)
			}
			namespaces := complete(t, c, shell, "mnemo narrow namespace ")
			for _, ns := range []string{"team:acme", "team:acme/agent:writer", "team:beta", "root"} {
				if !slices.Contains(namespaces, ns) {
					t.Errorf("narrow namespace completes %v, missing %s from the store", namespaces, ns)
				}
			}
			if got := complete(t, c, shell, "mnemo narrow tag o"); !slices.Equal(got, []string{"ops"}) {
				t.Errorf("narrow tag o completes %v, want the store's tag ops", got)
			}
			if got := complete(t, c, shell, "mnemo fetch tabs --mode "); !slices.Equal(sorted(got), []string{"hybrid", "keyword", "vector"}) {
				t.Errorf("fetch --mode completes %v, want the engine's modes", got)
			}
			id := fixtureID(t, 1)
			if got := complete(t, c, shell, "mnemo get "+id[:6]); !slices.Equal(got, []string{id}) {
				t.Errorf("get %s completes %v, want %s", id[:6], got, id)
			}
		})
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestCompletionNeverCreatesAStore(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "__complete", "narrow", "namespace", "")
	if r.code != 0 || strings.TrimSpace(r.stdout) != ":4" {
		t.Errorf("completion without a store: exit %d, %q", r.code, r.stdout)
	}
	if _, err := os.Stat(c.db); !os.IsNotExist(err) {
		t.Errorf("completion created the store at %s", c.db)
	}
}
