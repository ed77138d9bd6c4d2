// Package wire is mnemo's HTTP API on the wire (docs/spec/cli.md section 4), written
// once: the operation names, the request bodies and answers that are not
// contract types, and the error envelope's mapping to HTTP statuses and back.
// The handler (server/httpapi), its client (engine/remote), access control
// (server/auth, whose audit events name the same operations) and the command
// line share it, so a rename or a new field cannot reach only one side.
package wire

import (
	"mnemo/contract"
	"mnemo/engine/curate"
)

// Op names an operation: the path of POST /v1/<op> and the op of its audit
// events.
type Op = string

// The operations served as POST /v1/<op>, one per contract.Engine call.
const (
	OpStore        Op = "store"
	OpStoreMany    Op = "store_many"
	OpFetch        Op = "fetch"
	OpRecall       Op = "recall"
	OpList         Op = "list"
	OpExport       Op = "export"
	OpExplore      Op = "explore"
	OpBrowse       Op = "browse"
	OpGet          Op = "get"
	OpGetRecords   Op = "get_records"
	OpForget       Op = "forget"
	OpForgetWithin Op = "forget_within"
	OpReview       Op = "review"
	OpSupersede    Op = "supersede"
	OpErase        Op = "erase"
	OpConsolidate  Op = "consolidate"
	OpBeliefs      Op = "beliefs"
	// OpClusters reads the clusters of a scope from what the store keeps
	// (curate.Kept): the process holding a bolt store clusters all of it.
	OpClusters Op = "clusters"
	// OpRestore writes whole records as they were (contract.Restorer): the
	// exact undo of a forget.
	OpRestore Op = "restore"
)

// The GET endpoints: /v1/health (no token needed), /v1/descriptor,
// /v1/principal (who the token is and what it may do), /v1/audit (admins)
// and /v1/changes (the change feed's long poll).
const (
	EndpointHealth     = "health"
	EndpointDescriptor = "descriptor"
	EndpointPrincipal  = "principal"
	EndpointAudit      = "audit"
	EndpointChanges    = "changes"
)

// OpAuthenticate is the audit op of a request refused before any operation
// (an unknown or missing token); it is also what a flood of them is
// rate-limited as.
const OpAuthenticate Op = "authenticate"

// PathPrefix is where the API lives.
const PathPrefix = "/v1/"

// The query parameters of GET /v1/audit.
const (
	AuditSince = "since"
	AuditLimit = "limit"
)

// StoreWithBody is the store body carrying options: {"item", "options"}.
// A bare item is a store without options.
type StoreWithBody struct {
	Item    contract.StoreItem    `json:"item"`
	Options contract.WriteOptions `json:"options"`
}

// StoreManyBody is the store_many body carrying options: {"items", "options"}.
// A bare array is a store_many without options.
type StoreManyBody struct {
	Items   []contract.StoreItem  `json:"items"`
	Options contract.WriteOptions `json:"options"`
}

// PrincipalAnswer is GET /v1/principal's answer: the token's principal, its
// role, whether it may change memory (store, forget, review, supersede), and
// the reach that bounds it (absent: everything but service sandboxes; the
// owner of a server is unlimited). A client hides what the principal cannot
// do (mnemo mcp's write tools, the TUI's write keys).
type PrincipalAnswer struct {
	Name      string          `json:"name"`
	Role      string          `json:"role"`
	Writes    bool            `json:"writes"`
	Reach     *contract.Reach `json:"reach,omitempty"`
	Unlimited bool            `json:"unlimited,omitempty"`
}

// RestoreBody is the restore body: {"records": [record with its item, ...]},
// 1..contract.MaxRestoreMany records; the answer is one receipt per record.
type RestoreBody struct {
	Records []contract.Record `json:"records"`
}

// ClustersBody is the clusters body: {"filter": MetaFilter, "config":
// curate.Config}, the thresholds the caller clusters with.
type ClustersBody struct {
	Filter contract.MetaFilter `json:"filter"`
	Config curate.Config       `json:"config"`
}

// ForgetAnswer is forget's and forget_within's answer: the contract's report
// plus how many named ids were left alone (outside the caller's reach, or absent).
type ForgetAnswer struct {
	Forgotten int `json:"forgotten"`
	Skipped   int `json:"skipped,omitempty"`
}
