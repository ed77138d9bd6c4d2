package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SourceKind says where a memory came from.
type SourceKind string

// The nine source kinds, in SourceKinds order.
const (
	SourceFolder       SourceKind = "folder"
	SourceFile         SourceKind = "file"
	SourceLink         SourceKind = "link"
	SourceGithub       SourceKind = "github"
	SourceRSS          SourceKind = "rss"
	SourceComposio     SourceKind = "composio"
	SourceConversation SourceKind = "conversation"
	SourceAgent        SourceKind = "agent"
	SourceImport       SourceKind = "import"
)

// SourceKinds lists every source kind.
var allSourceKinds = [...]SourceKind{SourceFolder, SourceFile, SourceLink, SourceGithub, SourceRSS, SourceComposio, SourceConversation, SourceAgent, SourceImport}

// SourceKinds returns every value, a fresh slice the caller may change.
func SourceKinds() []SourceKind { return slices.Clone(allSourceKinds[:]) }

// ParseSourceKind parses a wire source kind.
func ParseSourceKind(s string) (SourceKind, bool) {
	for _, k := range allSourceKinds {
		if string(k) == s {
			return k, true
		}
	}
	return "", false
}

// UnmarshalJSON refuses unknown source kinds.
func (k *SourceKind) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("source kind must be a string")
	}
	sk, ok := ParseSourceKind(s)
	if !ok {
		return fmt.Errorf("`%s` is not a source kind", s)
	}
	*k = sk
	return nil
}

// UnmarshalJSON refuses unknown item kinds.
func (k *ItemKind) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("item kind must be a string")
	}
	ik, ok := ParseItemKind(s)
	if !ok {
		return fmt.Errorf("`%s` is not an item kind", s)
	}
	*k = ik
	return nil
}

// SourceRef names a memory's source. Its kind defaults to agent.
type SourceRef struct {
	Kind SourceKind `json:"kind"`
	ID   *string    `json:"id,omitempty"`
}

// TurnRange is a zero-based inclusive range of turns.
type TurnRange struct {
	First uint32 `json:"first"`
	Last  uint32 `json:"last"`
}

// ObservedActor is who said or did something when it was not the owner.
type ObservedActor struct {
	ID   string  `json:"id"`
	Name *string `json:"name,omitempty"`
}

// MemoryMeta is an item's metadata. The zero value is the root namespace with an
// agent source.
type MemoryMeta struct {
	Namespace     Namespace
	Workspace     *string
	Folder        *string
	FilePath      *string
	Language      *string
	Repo          *string
	Commit        *string
	URL           *string
	ThreadID      *string
	Turns         *TurnRange
	AgentID       *string
	ToolCall      *ToolCallRef
	Source        SourceRef
	Tags          []string
	ObservedAt    *time.Time
	Derive        *bool
	ObservedActor *ObservedActor
}

// SourceKindOf returns the source kind, agent when unset.
func (m MemoryMeta) SourceKindOf() SourceKind {
	if m.Source.Kind == "" {
		return SourceAgent
	}
	return m.Source.Kind
}

// MetaFromSource returns metadata that sets only the source.
func MetaFromSource(kind SourceKind, id *string) MemoryMeta {
	return MemoryMeta{Source: SourceRef{Kind: kind, ID: id}}
}

// MarshalJSON writes the meta in wire order, omitting what is unset.
func (m MemoryMeta) MarshalJSON() ([]byte, error) {
	var w canonWriter
	w.meta(&m, false)
	if w.err != nil {
		return nil, w.err
	}
	return w.buf, nil
}

type rawMeta struct {
	Namespace     *string        `json:"namespace"`
	Workspace     *string        `json:"workspace"`
	Folder        *string        `json:"folder"`
	FilePath      *string        `json:"file_path"`
	Language      *string        `json:"language"`
	Repo          *string        `json:"repo"`
	Commit        *string        `json:"commit"`
	URL           *string        `json:"url"`
	ThreadID      *string        `json:"thread_id"`
	Turns         *TurnRange     `json:"turns"`
	AgentID       *string        `json:"agent_id"`
	ToolCall      *ToolCallRef   `json:"tool_call"`
	Source        *SourceRef     `json:"source"`
	Tags          []string       `json:"tags"`
	ObservedAt    *string        `json:"observed_at"`
	Derive        *bool          `json:"derive"`
	ObservedActor *ObservedActor `json:"observed_actor"`
}

// UnmarshalJSON reads metadata; every field may be omitted and unknown keys are ignored.
func (m *MemoryMeta) UnmarshalJSON(data []byte) error {
	var r rawMeta
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	out, err := r.meta(ParseNamespace)
	if err != nil {
		return err
	}
	*m = out
	return nil
}

// meta is the metadata r reads, its namespace parsed by parseNS.
func (r *rawMeta) meta(parseNS func(string) (Namespace, error)) (MemoryMeta, error) {
	out := MemoryMeta{
		Workspace: r.Workspace, Folder: r.Folder, FilePath: r.FilePath, Language: r.Language,
		Repo: r.Repo, Commit: r.Commit, URL: r.URL, ThreadID: r.ThreadID, Turns: r.Turns,
		AgentID: r.AgentID, ToolCall: r.ToolCall, Tags: r.Tags, Derive: r.Derive,
		ObservedActor: r.ObservedActor,
	}
	if r.Namespace != nil {
		ns, err := parseNS(*r.Namespace)
		if err != nil {
			return MemoryMeta{}, fmt.Errorf("namespace: %s", AsError(err).Message)
		}
		out.Namespace = ns
	}
	if r.Source != nil {
		out.Source = *r.Source
	}
	if out.Source.Kind == "" {
		out.Source.Kind = SourceAgent
	}
	if r.ObservedAt != nil {
		t, err := ParseTime(*r.ObservedAt)
		if err != nil {
			return MemoryMeta{}, fmt.Errorf("observed_at: %w", err)
		}
		out.ObservedAt = &t
	}
	if len(out.Tags) == 0 {
		out.Tags = nil
	}
	return out, nil
}

// UnmarshalJSON defaults the source kind to agent.
func (s *SourceRef) UnmarshalJSON(data []byte) error {
	var r struct {
		Kind *SourceKind `json:"kind"`
		ID   *string     `json:"id"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	if r.Kind == nil {
		return fmt.Errorf("missing field `kind`")
	}
	*s = SourceRef{Kind: *r.Kind, ID: r.ID}
	return nil
}

// RedactedPrefix marks an id that was replaced by its digest.
const RedactedPrefix = "tm-redacted:"

// RedactedID is "tm-redacted:" and the hex of the first 16 bytes of SHA-256(s).
func RedactedID(s string) string {
	sum := sha256.Sum256([]byte(s))
	return RedactedPrefix + hex.EncodeToString(sum[:16])
}

// SameID tells whether a held id names the wanted one, directly or redacted.
func SameID(held *string, wanted string) bool {
	if held == nil {
		return false
	}
	if *held == wanted {
		return true
	}
	return strings.HasPrefix(*held, RedactedPrefix) && *held == RedactedID(wanted)
}

// knownMetaKey tells whether MemoryMeta reads key (rawMeta's keys; a test
// holds the two together).
func knownMetaKey(key string) bool {
	switch key {
	case "namespace", "workspace", "folder", "file_path", "language", "repo", "commit", "url", "thread_id",
		"turns", "agent_id", "tool_call", "source", "tags", "observed_at", "derive", "observed_actor":
		return true
	}
	return false
}
