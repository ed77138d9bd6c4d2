// Package audit is serve mode's audit log: the event every mutation and every
// refused request leaves, and the interfaces of the stores that keep and read
// them back. It lives apart from server/auth so that an engine (engine/bolt,
// engine/postgres) can keep the log without importing access control.
package audit

import (
	"context"
	"encoding/json"
	"time"

	"mnemo/contract"
)

// Event is one audit log line: a mutation or a refused request.
type Event struct {
	At        time.Time
	Principal string
	// Role is the principal's role (auth.Role) as the log writes it.
	Role string
	// Via is where the request came from: "http", "ssh", "cli".
	Via string
	// Op is the contract operation (store, store_many, forget, forget_within,
	// review, supersede, erase, consolidate) or, for refusals before any
	// operation, "authenticate".
	Op  string
	IDs []string
	// Where are the namespaces of the records the operation changed or was
	// refused at (store, forget by ids, review, supersede): with the reach
	// and the filter's reach, what confines the entry to the admins whose
	// reach holds it all.
	Where  []contract.Namespace
	Filter *contract.MetaFilter
	// Reach is the reach the operation ran under (for a refusal, the one asked).
	Reach *contract.Reach
	// Count is how many records the operation changed.
	Count int
	// Skipped counts ids a forget left alone because they lie outside the reach
	// (or do not exist).
	Skipped int
	// Detail carries the review action or the superseding id.
	Detail string
	// Refused is the refusal's message; empty for a mutation that ran.
	Refused string
}

type eventWire struct {
	At        string               `json:"at"`
	Principal string               `json:"principal"`
	Role      string               `json:"role,omitempty"`
	Via       string               `json:"via,omitempty"`
	Op        string               `json:"op"`
	IDs       []string             `json:"ids,omitempty"`
	Where     []contract.Namespace `json:"where,omitempty"`
	Filter    *contract.MetaFilter `json:"filter,omitempty"`
	Reach     *contract.Reach      `json:"reach,omitempty"`
	Count     int                  `json:"count"`
	Skipped   int                  `json:"skipped,omitempty"`
	Detail    string               `json:"detail,omitempty"`
	Refused   string               `json:"refused,omitempty"`
}

// MarshalJSON writes one JSONL audit line, the time as ISO-8601 UTC with milliseconds.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventWire{At: contract.FormatMillis(e.At), Principal: e.Principal, Role: e.Role, Via: e.Via,
		Op: e.Op, IDs: e.IDs, Where: e.Where, Filter: e.Filter, Reach: e.Reach, Count: e.Count, Skipped: e.Skipped,
		Detail: e.Detail, Refused: e.Refused})
}

// UnmarshalJSON reads an audit line.
func (e *Event) UnmarshalJSON(data []byte) error {
	var w eventWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	at, err := contract.ParseTime(w.At)
	if err != nil {
		return err
	}
	*e = Event{At: at, Principal: w.Principal, Role: w.Role, Via: w.Via, Op: w.Op, IDs: w.IDs, Where: w.Where, Filter: w.Filter,
		Reach: w.Reach, Count: w.Count, Skipped: w.Skipped, Detail: w.Detail, Refused: w.Refused}
	return nil
}

// Log receives audit events; engine/bolt and engine/postgres keep them in the store.
type Log interface {
	AppendAudit(ctx context.Context, ev Event) error
}

// Query selects audit events: those at or after Since, oldest first, at
// most Limit (0 means no limit) of those Visible admits (nil admits all).
type Query struct {
	Since time.Time
	Limit int
	// Visible confines the log to one reader (Principal.Sees); it is applied
	// before Limit counts, and must not read the store.
	Visible func(Event) bool
}

// Reader reads the audit log back (mnemo audit, the TUI).
type Reader interface {
	ReadAudit(ctx context.Context, q Query) ([]Event, error)
}
