package contract

import (
	"encoding/json"
	"fmt"
	"time"
)

// Record is a stored item as browse, review and the TUI see it: the hit plus the
// system fields the engine owns. Item is set only by GetRecords.
type Record struct {
	ID           string
	Kind         ItemKind
	Text         string
	Meta         MemoryMeta
	Confidence   *F32
	Status       Status
	CreatedAt    time.Time
	UpdatedAt    time.Time
	ExpiresAt    *time.Time
	SupersededBy *string
	Item         *StoreItem
}

// RecordOf builds a record from a stored item and its system fields.
func RecordOf(id string, it *StoreItem, status Status, created, updated time.Time, expires *time.Time, supersededBy *string) Record {
	h := HitOf(id, it)
	if status == "" {
		status = StatusActive
	}
	return Record{ID: id, Kind: h.Kind, Text: h.Text, Meta: h.Meta, Confidence: h.Confidence,
		Status: status, CreatedAt: created.UTC(), UpdatedAt: updated.UTC(), ExpiresAt: expires, SupersededBy: supersededBy}
}

// Hit returns the record as a listing hit.
func (r Record) Hit() Hit {
	return Hit{ID: r.ID, Kind: r.Kind, Text: r.Text, Meta: r.Meta, Confidence: r.Confidence}
}

type recordWire struct {
	ID           string     `json:"id"`
	Kind         ItemKind   `json:"kind"`
	Text         string     `json:"text"`
	Meta         MemoryMeta `json:"meta"`
	Confidence   *F32       `json:"confidence,omitempty"`
	Status       Status     `json:"status"`
	CreatedAt    string     `json:"created_at"`
	UpdatedAt    string     `json:"updated_at"`
	ExpiresAt    *string    `json:"expires_at,omitempty"`
	SupersededBy *string    `json:"superseded_by,omitempty"`
	Item         *StoreItem `json:"item,omitempty"`
}

// MarshalJSON writes times as full ISO-8601 UTC with milliseconds.
func (r Record) MarshalJSON() ([]byte, error) { return r.appendJSON(make([]byte, 0, r.sizeHint())) }

// UnmarshalJSON reads a record.
func (r *Record) UnmarshalJSON(data []byte) error {
	var w struct {
		recordWire
		Confidence *float32 `json:"confidence"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	out := Record{ID: w.ID, Kind: w.Kind, Text: w.Text, Meta: w.Meta, Status: w.Status,
		SupersededBy: w.SupersededBy, Item: w.Item}
	if w.Confidence != nil {
		c := F32(*w.Confidence)
		out.Confidence = &c
	}
	var err error
	if out.CreatedAt, err = ParseTime(w.CreatedAt); err != nil {
		return fmt.Errorf("created_at: %w", err)
	}
	if out.UpdatedAt, err = ParseTime(w.UpdatedAt); err != nil {
		return fmt.Errorf("updated_at: %w", err)
	}
	if w.ExpiresAt != nil {
		t, err := ParseTime(*w.ExpiresAt)
		if err != nil {
			return fmt.Errorf("expires_at: %w", err)
		}
		out.ExpiresAt = &t
	}
	*r = out
	return nil
}

// UnmarshalJSON reads a hit (scores and confidences as plain numbers).
func (h *Hit) UnmarshalJSON(data []byte) error {
	var w struct {
		ID         string     `json:"id"`
		Kind       ItemKind   `json:"kind"`
		Text       string     `json:"text"`
		Meta       MemoryMeta `json:"meta"`
		Score      float32    `json:"score"`
		Confidence *float32   `json:"confidence"`
		Evidence   []string   `json:"evidence"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*h = Hit{ID: w.ID, Kind: w.Kind, Text: w.Text, Meta: w.Meta, Score: F32(w.Score), Evidence: w.Evidence}
	if w.Confidence != nil {
		c := F32(*w.Confidence)
		h.Confidence = &c
	}
	return nil
}

// UnmarshalJSON reads a citation.
func (c *Citation) UnmarshalJSON(data []byte) error {
	var w struct {
		ID      string     `json:"id"`
		Kind    ItemKind   `json:"kind"`
		Snippet string     `json:"snippet"`
		Meta    MemoryMeta `json:"meta"`
		Score   *float32   `json:"score"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*c = Citation{ID: w.ID, Kind: w.Kind, Snippet: w.Snippet, Meta: w.Meta}
	if w.Score != nil {
		s := F32(*w.Score)
		c.Score = &s
	}
	return nil
}

// ReviewAction is what review does to a candidate.
type ReviewAction string

// Review actions.
const (
	ReviewApprove ReviewAction = "approve"
	ReviewReject  ReviewAction = "reject"
)

// ReviewRequest approves or rejects a candidate.
type ReviewRequest struct {
	ID     string       `json:"id"`
	Action ReviewAction `json:"action"`
}

// Validate checks the id and action.
func (r ReviewRequest) Validate() error {
	if trimSpace(r.ID) == "" {
		return Invalid("an id must not be blank")
	}
	if r.Action != ReviewApprove && r.Action != ReviewReject {
		return Invalid("review action must be `approve` or `reject`, not `%s`", r.Action)
	}
	return nil
}

// ReviewResult is the approved record, or the count a reject forgot.
type ReviewResult struct {
	Record    *Record
	Forgotten int
}

// MarshalJSON writes the record, or {"forgotten": n}.
func (r ReviewResult) MarshalJSON() ([]byte, error) {
	if r.Record != nil {
		return json.Marshal(r.Record)
	}
	return json.Marshal(struct {
		Forgotten int `json:"forgotten"`
	}{r.Forgotten})
}

// UnmarshalJSON reads either shape.
func (r *ReviewResult) UnmarshalJSON(data []byte) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	if f, ok := probe["forgotten"]; ok && len(probe) == 1 {
		*r = ReviewResult{}
		return json.Unmarshal(f, &r.Forgotten)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return err
	}
	*r = ReviewResult{Record: &rec}
	return nil
}

// SupersedeRequest marks ID as superseded by By. With Undo it takes that
// back: ID, which must be superseded by By, has the status it had before
// again (curation's undo; docs/curation.md).
type SupersedeRequest struct {
	ID   string `json:"id"`
	By   string `json:"by"`
	Undo bool   `json:"undo,omitempty"`
	// Status is, with Undo, the status the record goes back to: active
	// (when empty) or candidate, what it was when it was superseded.
	Status Status `json:"status,omitempty"`
}

// UndoStatus is the status an undo gives the record back.
func (r SupersedeRequest) UndoStatus() Status {
	if r.Status == "" {
		return StatusActive
	}
	return r.Status
}

// UndoOp is the change an undo logs: approve when the record is active
// again, restore when it is a candidate again (put back as it was, not
// approved).
func (r SupersedeRequest) UndoOp() ChangeOp {
	if r.UndoStatus() == StatusCandidate {
		return OpRestore
	}
	return OpApprove
}

// NotSupersededBy is the conflict an undo answers when ID is not superseded by By.
func NotSupersededBy(id, by string) error {
	return Conflict("record %s is not superseded by %s", id, by)
}

// Validate checks both ids are set and differ.
func (r SupersedeRequest) Validate() error {
	if trimSpace(r.ID) == "" || trimSpace(r.By) == "" {
		return Invalid("an id must not be blank")
	}
	if r.ID == r.By {
		return Invalid("a record cannot supersede itself")
	}
	switch {
	case r.Status == "":
	case !r.Undo:
		return Invalid("status is for an undo (the status the record goes back to); a supersede sets superseded")
	case r.Status != StatusActive && r.Status != StatusCandidate:
		return Invalid("an undone supersede goes back to active or candidate, not %q", r.Status)
	}
	return nil
}
