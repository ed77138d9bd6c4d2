package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"

	"mnemo/contract"
	"mnemo/engine/remote"
	"mnemo/server/mcp"
)

// mcpFlags are mcp's own flags: the scope the host fixes for the agent.
type mcpFlags struct {
	place    string
	reach    string
	readOnly bool
	zone     string
}

func newMCPCommand(a *app) *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp --place NAMESPACE",
		Short: "Serve the memory tools to an agent over MCP (stdio)",
		Long: `Serve mnemo's seven memory tools to an AI agent over the Model Context Protocol on
stdin and stdout: memory_recall, memory_fetch, memory_list, memory_get and
memory_explore read; memory_store and memory_forget write.

The scope is fixed here, never by the model: every memory the agent stores lands at
--place, and every read and forget is confined to --reach (default: the place and
its ancestors, never a sibling). A tool argument naming a namespace or a reach is
refused. --read-only offers the five reads only, and so does a --remote token
whose principal is a reader.

Add it to an agent's MCP configuration as a command, for example
  mnemo mcp --place team:acme/agent:writer
The TUI, other agents and every command can use the same local store at the
same time. Use --remote (or MNEMO_REMOTE) for a store that "mnemo serve" owns,
on this machine or another.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			scope, err := mcpScope(cmd, f)
			if err != nil {
				return err
			}
			return a.runMCP(cmd.Context(), scope)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.place, "place", "", "the namespace the agent's memories are stored at, e.g. team:acme/agent:writer (\"root\" for the root)")
	fl.StringVar(&f.reach, "reach", "", "confine reads and forgets to this Reach (JSON); default: the place and its ancestors")
	fl.BoolVar(&f.readOnly, "read-only", false, "offer only the read tools (no memory_store, no memory_forget)")
	fl.StringVar(&f.zone, "zone", "", "IANA time zone the agent's dates (refers_to) are read in; default UTC")
	return cmd
}

// mcpScope reads the scope flags. --place is required: which memory an agent
// writes to is a decision the host makes on purpose.
func mcpScope(cmd *cobra.Command, f mcpFlags) (mcp.ToolScope, error) {
	if !cmd.Flags().Changed("place") {
		return mcp.ToolScope{}, usageError("mcp needs --place NAMESPACE: where the agent's memories are stored (\"root\" for the root)")
	}
	place, err := contract.ParseNamespace(f.place)
	if err != nil {
		return mcp.ToolScope{}, contract.Invalid("--place: %s", contract.AsError(err).Message)
	}
	scope := mcp.ScopeAt(place)
	r, err := parseReachFlag("--reach", f.reach)
	if err != nil {
		return mcp.ToolScope{}, err
	}
	if r != nil {
		if !f.readOnly && !r.Admits(place) {
			return mcp.ToolScope{}, usageError("--reach does not admit --place " + place.String() + ": the agent could not read back what it stores")
		}
		scope.Reach = r
	}
	scope.Writes = !f.readOnly
	if f.zone != "" {
		if _, err := time.LoadLocation(f.zone); err != nil || f.zone == "Local" {
			return mcp.ToolScope{}, usageError("--zone " + f.zone + " is not an IANA time zone")
		}
		scope.Zone = f.zone
	}
	return scope, nil
}

// runMCP serves the tools on the app's stdin and stdout until the client
// closes the stream or the process is interrupted. Stdout carries only MCP
// messages; logs go to the debug log.
func (a *app) runMCP(ctx context.Context, scope mcp.ToolScope) error {
	e, err := a.engine(ctx)
	if err != nil {
		return err
	}
	// A reader's token gets the read tools only: offering memory_store and
	// memory_forget would only earn the model a refusal.
	if scope.Writes {
		writes, err := remote.Writes(ctx, e)
		if err != nil {
			return err
		}
		scope.Writes = writes
	}
	tools := mcp.New(e, scope)
	err = mcp.Serve(ctx, tools, mcp.NewStreamTransport(a.stdin, a.stdout), mcp.ServerOptions{Version: version(), Logger: a.logger})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		// The client hanging up or an interrupt is the normal end of a session.
		return nil
	}
	return contract.Unavailable("the MCP session ended: %w", err)
}
