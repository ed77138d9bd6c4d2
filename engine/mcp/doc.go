// Package mcp serves mnemo's agent-facing memory tools over the Model Context
// Protocol. It is a boundary over any contract.Engine, like engine/httpapi.
package mcp

import _ "github.com/modelcontextprotocol/go-sdk/mcp"
