package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Status is a record's lifecycle state (mnemo's extension).
type Status string

// Record statuses.
const (
	StatusActive     Status = "active"
	StatusCandidate  Status = "candidate"
	StatusSuperseded Status = "superseded"
)

// Statuses lists every status in Dawn's canonical order.
var allStatuses = [...]Status{StatusCandidate, StatusActive, StatusSuperseded}

// Statuses returns every value, a fresh slice the caller may change.
func Statuses() []Status { return slices.Clone(allStatuses[:]) }

// ParseStatus parses a wire status.
func ParseStatus(s string) (Status, bool) {
	for _, st := range allStatuses {
		if string(st) == s {
			return st, true
		}
	}
	return "", false
}

// UnmarshalJSON refuses unknown statuses.
func (s *Status) UnmarshalJSON(data []byte) error {
	var v string
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("status must be a string")
	}
	st, ok := ParseStatus(v)
	if !ok {
		return fmt.Errorf("`%s` is not a status", v)
	}
	*s = st
	return nil
}

// MetaFilter selects items by metadata. Every set field must match; the empty
// filter matches everything but service sandboxes.
type MetaFilter struct {
	Reach          *Reach       `json:"reach,omitempty"`
	Workspace      *string      `json:"workspace,omitempty"`
	Folder         *string      `json:"folder,omitempty"`
	FilePath       *string      `json:"file_path,omitempty"`
	Language       *string      `json:"language,omitempty"`
	Repo           *string      `json:"repo,omitempty"`
	Commit         *string      `json:"commit,omitempty"`
	URL            *string      `json:"url,omitempty"`
	ThreadID       *string      `json:"thread_id,omitempty"`
	Turns          *TurnRange   `json:"turns,omitempty"`
	AgentID        *string      `json:"agent_id,omitempty"`
	ToolCall       *string      `json:"tool_call,omitempty"`
	SourceID       *string      `json:"source_id,omitempty"`
	Kinds          []ItemKind   `json:"kinds,omitempty"`
	Sources        []SourceKind `json:"sources,omitempty"`
	TagsAny        []string     `json:"tags_any,omitempty"`
	ObservedAfter  *time.Time   `json:"-"`
	ObservedBefore *time.Time   `json:"-"`
	// Statuses is mnemo's extension: empty means every status for listings and
	// only active for fetch and recall.
	Statuses []Status `json:"statuses,omitempty"`
}

type filterWire struct {
	Reach          *Reach       `json:"reach,omitempty"`
	Workspace      *string      `json:"workspace,omitempty"`
	Folder         *string      `json:"folder,omitempty"`
	FilePath       *string      `json:"file_path,omitempty"`
	Language       *string      `json:"language,omitempty"`
	Repo           *string      `json:"repo,omitempty"`
	Commit         *string      `json:"commit,omitempty"`
	URL            *string      `json:"url,omitempty"`
	ThreadID       *string      `json:"thread_id,omitempty"`
	Turns          *TurnRange   `json:"turns,omitempty"`
	AgentID        *string      `json:"agent_id,omitempty"`
	ToolCall       *string      `json:"tool_call,omitempty"`
	SourceID       *string      `json:"source_id,omitempty"`
	Kinds          []ItemKind   `json:"kinds,omitempty"`
	Sources        []SourceKind `json:"sources,omitempty"`
	TagsAny        []string     `json:"tags_any,omitempty"`
	ObservedAfter  *string      `json:"observed_after,omitempty"`
	ObservedBefore *string      `json:"observed_before,omitempty"`
	Statuses       []Status     `json:"statuses,omitempty"`
}

// MarshalJSON writes the filter, omitting unset fields.
func (f MetaFilter) MarshalJSON() ([]byte, error) {
	w := filterWire{f.Reach, f.Workspace, f.Folder, f.FilePath, f.Language, f.Repo, f.Commit, f.URL,
		f.ThreadID, f.Turns, f.AgentID, f.ToolCall, f.SourceID, f.Kinds, f.Sources, f.TagsAny, nil, nil, f.Statuses}
	if f.ObservedAfter != nil {
		w.ObservedAfter = Ptr(FormatTime(*f.ObservedAfter))
	}
	if f.ObservedBefore != nil {
		w.ObservedBefore = Ptr(FormatTime(*f.ObservedBefore))
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a filter; unknown keys are ignored like the reference.
func (f *MetaFilter) UnmarshalJSON(data []byte) error {
	var w filterWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	out := MetaFilter{w.Reach, w.Workspace, w.Folder, w.FilePath, w.Language, w.Repo, w.Commit, w.URL,
		w.ThreadID, w.Turns, w.AgentID, w.ToolCall, w.SourceID, w.Kinds, w.Sources, w.TagsAny, nil, nil, w.Statuses}
	if w.ObservedAfter != nil {
		t, err := ParseTime(*w.ObservedAfter)
		if err != nil {
			return fmt.Errorf("observed_after: %w", err)
		}
		out.ObservedAfter = &t
	}
	if w.ObservedBefore != nil {
		t, err := ParseTime(*w.ObservedBefore)
		if err != nil {
			return fmt.Errorf("observed_before: %w", err)
		}
		out.ObservedBefore = &t
	}
	*f = out
	return nil
}

// IsEmpty tells whether the filter sets nothing (a reach alone is not empty).
func (f MetaFilter) IsEmpty() bool {
	return f.Reach == nil && f.Workspace == nil && f.Folder == nil && f.FilePath == nil &&
		f.Language == nil && f.Repo == nil && f.Commit == nil && f.URL == nil && f.ThreadID == nil &&
		f.Turns == nil && f.AgentID == nil && f.ToolCall == nil && f.SourceID == nil &&
		len(f.Kinds) == 0 && len(f.Sources) == 0 && len(f.TagsAny) == 0 &&
		f.ObservedAfter == nil && f.ObservedBefore == nil && len(f.Statuses) == 0
}

// AdmitsKind tells whether the kinds constraint lets kind through.
func (f MetaFilter) AdmitsKind(kind ItemKind) bool {
	return len(f.Kinds) == 0 || slices.Contains(f.Kinds, kind)
}

// AdmitsStatus applies the statuses extension; ranked reads (fetch, recall) see
// only active records when the filter names no status.
func (f MetaFilter) AdmitsStatus(s Status, ranked bool) bool {
	if len(f.Statuses) == 0 {
		return !ranked || s == StatusActive
	}
	return slices.Contains(f.Statuses, s)
}

func exactMatch(want, held *string) bool {
	return want == nil || (held != nil && *held == *want)
}

// PathMatch is the folder/file_path rule: equal, or below the wanted path on a `/` boundary.
func PathMatch(want string, held *string) bool {
	if held == nil {
		return false
	}
	if *held == want {
		return true
	}
	base := strings.TrimRight(want, "/")
	if !strings.HasPrefix(*held, base) {
		return false
	}
	rest := (*held)[len(base):]
	return rest == "" || rest[0] == '/'
}

// Matches tells whether an item of this kind and meta passes the filter
// (statuses are not part of the item; see AdmitsStatus).
func (f MetaFilter) Matches(kind ItemKind, m *MemoryMeta) bool {
	if !AdmittedBy(f.Reach, m.Namespace) {
		return false
	}
	if !exactMatch(f.Workspace, m.Workspace) || !exactMatch(f.Language, m.Language) ||
		!exactMatch(f.Repo, m.Repo) || !exactMatch(f.Commit, m.Commit) || !exactMatch(f.URL, m.URL) {
		return false
	}
	if f.Folder != nil && !PathMatch(*f.Folder, m.Folder) {
		return false
	}
	if f.FilePath != nil && !PathMatch(*f.FilePath, m.FilePath) {
		return false
	}
	if f.ThreadID != nil && !SameID(m.ThreadID, *f.ThreadID) {
		return false
	}
	if f.AgentID != nil && !SameID(m.AgentID, *f.AgentID) {
		return false
	}
	if f.SourceID != nil && !SameID(m.Source.ID, *f.SourceID) {
		return false
	}
	if f.Turns != nil && (m.Turns == nil || *m.Turns != *f.Turns) {
		return false
	}
	if f.ToolCall != nil && (m.ToolCall == nil || m.ToolCall.Name != *f.ToolCall) {
		return false
	}
	if !f.AdmitsKind(kind) {
		return false
	}
	if len(f.Sources) > 0 && !slices.Contains(f.Sources, m.SourceKindOf()) {
		return false
	}
	if len(f.TagsAny) > 0 {
		hit := false
		for _, t := range m.Tags {
			if slices.Contains(f.TagsAny, t) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	if f.ObservedAfter != nil || f.ObservedBefore != nil {
		if m.ObservedAt == nil {
			return false
		}
		if f.ObservedAfter != nil && m.ObservedAt.Before(*f.ObservedAfter) {
			return false
		}
		if f.ObservedBefore != nil && !m.ObservedAt.Before(*f.ObservedBefore) {
			return false
		}
	}
	return true
}

// Clone returns a deep copy, so narrowing never aliases the caller's slices.
func (f MetaFilter) Clone() MetaFilter {
	out := f
	if f.Reach != nil {
		r := *f.Reach
		out.Reach = &r
	}
	out.Kinds = slices.Clone(f.Kinds)
	out.Sources = slices.Clone(f.Sources)
	out.TagsAny = slices.Clone(f.TagsAny)
	out.Statuses = slices.Clone(f.Statuses)
	return out
}
