package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/contract"
)

// ServerOptions name the server to MCP clients and say where engine failures
// are logged.
type ServerOptions struct {
	// Name and Version are the implementation the server reports on
	// initialize; Name defaults to "mnemo".
	Name    string
	Version string
	// Logger receives the full text of engine and configuration failures,
	// which the model only reads scrubbed. Nil discards them.
	Logger *slog.Logger
}

// engineFailure is what a model reads instead of an engine or configuration
// failure's own text, which can name files or internals.
const engineFailure = "the memory engine failed on this request; the host's log has the details"

// NewServer returns an MCP server offering the tools. Each offered tool is
// registered with its schema and a raw handler (the SDK hands its arguments
// over unvalidated); calls to any other name go through the same dispatch, so
// the model reads the reference's refusal rather than the SDK's.
func NewServer(tools *Tools, opts ServerOptions) *sdk.Server {
	if opts.Name == "" {
		opts.Name = "mnemo"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: opts.Name, Title: "mnemo memory", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions(tools.Scope()), Logger: logger})
	d := dispatcher{tools: tools, logger: logger}
	var offered []string
	for _, s := range tools.Specs() {
		offered = append(offered, s.Name)
		srv.AddTool(&sdk.Tool{
			Name:        s.Name,
			Description: s.Description,
			InputSchema: s.Parameters,
			Annotations: annotations(s.Name),
		}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return d.call(ctx, req.Params.Name, req.Params.Arguments), nil
		})
	}
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if call, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && call.Params != nil &&
				!slices.Contains(offered, call.Params.Name) {
				return d.call(ctx, call.Params.Name, call.Params.Arguments), nil
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// Serve runs the tools over one MCP transport until the client disconnects or
// ctx ends.
func Serve(ctx context.Context, tools *Tools, t sdk.Transport, opts ServerOptions) error {
	return NewServer(tools, opts).Run(ctx, t)
}

// instructions tell the model what the tools are for and that it does not
// choose where memories live.
func instructions(s ToolScope) string {
	text := "Long-term memory for this agent. Recall answers questions from it; fetch, list, get and explore read " +
		"memories directly. Where memories are kept and how far reads see is fixed by the host: never pass a " +
		"namespace or a reach."
	if s.Writes {
		text += " Store what is worth keeping across sessions (preferences, facts, procedures, corrections); " +
			"forget what is wrong or no longer wanted."
	} else {
		text += " These tools are read-only."
	}
	return text
}

// annotations are the MCP hints a client may show or act on.
func annotations(name string) *sdk.ToolAnnotations {
	destructive := name == ToolForget
	closedWorld := false
	a := &sdk.ToolAnnotations{
		ReadOnlyHint:    !isWriteTool(name),
		IdempotentHint:  true,
		DestructiveHint: &destructive,
		OpenWorldHint:   &closedWorld,
	}
	return a
}

// dispatcher turns Tools.Call into MCP tool results.
type dispatcher struct {
	tools  *Tools
	logger *slog.Logger
}

// call runs one tool and wraps its answer: the JSON result as text and as
// structured content, or the error as text with isError set, so the model
// reads the refusal and can correct its call.
func (d dispatcher) call(ctx context.Context, name string, args json.RawMessage) *sdk.CallToolResult {
	out, err := d.tools.Call(ctx, name, args)
	if err != nil {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: d.errorText(name, err)}}}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(out)}}, StructuredContent: out}
}

func (d dispatcher) errorText(name string, err error) string {
	ce := contract.AsError(err)
	switch ce.Kind {
	case contract.KindEngine, contract.KindConfig:
		d.logger.Error("memory tool failed", "tool", name, "kind", string(ce.Kind), "err", ce.Message)
		return string(ce.Kind) + ": " + engineFailure
	}
	return ce.Error()
}
