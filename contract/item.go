package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ItemKind is the kind of a stored item.
type ItemKind string

// The three item kinds, in ItemKinds order.
const (
	KindDocument     ItemKind = "document"
	KindConversation ItemKind = "conversation"
	KindLearning     ItemKind = "learning"
)

// ItemKinds lists every item kind in the reference's order.
var allItemKinds = [...]ItemKind{KindDocument, KindConversation, KindLearning}

// ItemKinds returns every value, a fresh slice the caller may change.
func ItemKinds() []ItemKind { return slices.Clone(allItemKinds[:]) }

// ParseItemKind parses a wire item kind.
func ParseItemKind(s string) (ItemKind, bool) {
	switch ItemKind(s) {
	case KindDocument, KindConversation, KindLearning:
		return ItemKind(s), true
	}
	return "", false
}

// LearningKind says what a learning is.
type LearningKind string

// Learning kinds.
const (
	LearningPreference LearningKind = "preference"
	LearningFact       LearningKind = "fact"
	LearningProcedure  LearningKind = "procedure"
	LearningCorrection LearningKind = "correction"
	LearningOther      LearningKind = "other"
)

// LearningKinds lists every learning kind.
var allLearningKinds = [...]LearningKind{LearningPreference, LearningFact, LearningProcedure, LearningCorrection, LearningOther}

// LearningKinds returns every value, a fresh slice the caller may change.
func LearningKinds() []LearningKind { return slices.Clone(allLearningKinds[:]) }

// ParseLearningKind parses a wire learning kind.
func ParseLearningKind(s string) (LearningKind, bool) {
	for _, k := range allLearningKinds {
		if string(k) == s {
			return k, true
		}
	}
	return "", false
}

// Role is who spoke a turn.
type Role string

// Turn roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// Roles lists every role.
var allRoles = [...]Role{RoleUser, RoleAssistant, RoleSystem, RoleTool}

// Roles returns every value, a fresh slice the caller may change.
func Roles() []Role { return slices.Clone(allRoles[:]) }

// ParseRole parses a wire role.
func ParseRole(s string) (Role, bool) {
	for _, r := range allRoles {
		if string(r) == s {
			return r, true
		}
	}
	return "", false
}

// ToolCallRef names a tool call.
type ToolCallRef struct {
	Name string  `json:"name"`
	ID   *string `json:"id,omitempty"`
}

// Turn is one turn of a conversation.
type Turn struct {
	Role      Role          `json:"role"`
	Text      string        `json:"text"`
	At        *time.Time    `json:"at,omitempty"`
	ToolCalls []ToolCallRef `json:"tool_calls,omitempty"`
}

// Render is "{role}: {text}" plus " [tools: name (id), name]" when the turn called tools.
func (t Turn) Render() string {
	var b strings.Builder
	b.WriteString(string(t.Role))
	b.WriteString(": ")
	b.WriteString(t.Text)
	if len(t.ToolCalls) > 0 {
		b.WriteString(" [tools: ")
		for i, c := range t.ToolCalls {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Name)
			if c.ID != nil {
				b.WriteString(" (")
				b.WriteString(*c.ID)
				b.WriteString(")")
			}
		}
		b.WriteString("]")
	}
	return b.String()
}

// DocumentBody is a document's text, or a URI not yet read (which validate refuses).
type DocumentBody struct {
	Text string
	URI  string
	// IsURI tells a {"uri": ...} body from a {"text": ...} one.
	IsURI bool
}

// TextBody returns a text document body.
func TextBody(s string) DocumentBody { return DocumentBody{Text: s} }

// String is the body's text, or its URI.
func (b DocumentBody) String() string {
	if b.IsURI {
		return b.URI
	}
	return b.Text
}

// StoreItem is one memory: a document, a conversation or a learning. Only the
// fields of its Type are meaningful; the wire form is tagged by "type".
type StoreItem struct {
	Type ItemKind

	// document
	Title *string
	Body  DocumentBody
	Mime  *string

	// conversation
	Turns []Turn

	// learning
	Text       string
	Kind       LearningKind
	Confidence float32
	Evidence   *string

	Meta MemoryMeta
}

// Document returns a text document with no title and no mime.
func Document(text string, meta MemoryMeta) StoreItem {
	return StoreItem{Type: KindDocument, Body: TextBody(text), Meta: meta}
}

// Learning returns a learning without evidence.
func Learning(text string, kind LearningKind, confidence float32, meta MemoryMeta) StoreItem {
	return StoreItem{Type: KindLearning, Text: text, Kind: kind, Confidence: confidence, Meta: meta}
}

// Conversation returns a conversation of the given turns.
func Conversation(turns []Turn, meta MemoryMeta) StoreItem {
	return StoreItem{Type: KindConversation, Turns: turns, Meta: meta}
}

// jsonSizeHint is about how long the item's JSON is: its texts and room for
// the rest. Writing into a buffer of that size, instead of one grown by
// appends, was a tenth of a 100k import's allocation.
func (it *StoreItem) jsonSizeHint() int {
	n := 256 + len(it.Text) + len(it.Body.Text) + len(it.Body.URI)
	if it.Title != nil {
		n += len(*it.Title)
	}
	if it.Evidence != nil {
		n += len(*it.Evidence)
	}
	for i := range it.Turns {
		n += 48 + len(it.Turns[i].Text)
	}
	return n + n/8
}

// ItemKind returns the item's kind.
func (it StoreItem) ItemKind() ItemKind { return it.Type }

// ConfidenceOf returns the learning's confidence, or nil for other kinds.
func (it StoreItem) ConfidenceOf() *float32 {
	if it.Type != KindLearning {
		return nil
	}
	c := it.Confidence
	return &c
}

// RenderText is the item's text as hits carry it: a document is "# {title}\n\n{body}"
// when its title is not blank, else its body; a conversation is its rendered turns
// joined by newlines; a learning is its text.
func (it StoreItem) RenderText() string {
	switch it.Type {
	case KindDocument:
		if it.Title != nil && strings.TrimSpace(*it.Title) != "" {
			return "# " + *it.Title + "\n\n" + it.Body.String()
		}
		return it.Body.String()
	case KindConversation:
		parts := make([]string, len(it.Turns))
		for i, t := range it.Turns {
			parts[i] = t.Render()
		}
		return strings.Join(parts, "\n")
	default:
		return it.Text
	}
}

// Validate checks the item with the reference's messages.
func (it StoreItem) Validate() error {
	switch it.Type {
	case KindDocument:
		if it.Body.IsURI {
			return Invalid("document body is an unresolved uri; resolve it through a source first")
		}
		if strings.TrimSpace(it.Body.Text) == "" {
			return Invalid("document body must not be empty")
		}
	case KindConversation:
		if len(it.Turns) == 0 {
			return Invalid("conversation must have at least one turn")
		}
		for _, t := range it.Turns {
			if strings.TrimSpace(t.Text) == "" {
				return Invalid("conversation turns must not be empty")
			}
		}
	case KindLearning:
		if strings.TrimSpace(it.Text) == "" {
			return Invalid("learning text must not be empty")
		}
		c := it.Confidence
		if c != c || c < 0 || c > 1 {
			return Invalid("learning confidence %s is outside 0.0..=1.0", formatF32Display(c))
		}
	default:
		return Invalid("unknown item type `%s`", it.Type)
	}
	return nil
}

// MarshalJSON writes the reference wire format (the canonical encoding, with
// observed_at and observed_actor kept).
func (it StoreItem) MarshalJSON() ([]byte, error) {
	w := canonWriter{buf: make([]byte, 0, it.jsonSizeHint())}
	w.item(&it, false)
	if w.err != nil {
		return nil, w.err
	}
	return w.buf, nil
}

type rawBody struct {
	Text *string `json:"text"`
	URI  *string `json:"uri"`
}

// UnmarshalJSON reads a DocumentBody: {"text": ...} or {"uri": ...}.
func (b *DocumentBody) UnmarshalJSON(data []byte) error {
	var r rawBody
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("document body must be {\"text\": ...} or {\"uri\": ...}")
	}
	out, err := r.body()
	if err != nil {
		return err
	}
	*b = out
	return nil
}

// body is the DocumentBody r holds.
func (r *rawBody) body() (DocumentBody, error) {
	switch {
	case r.Text != nil && r.URI == nil:
		return DocumentBody{Text: *r.Text}, nil
	case r.URI != nil && r.Text == nil:
		return DocumentBody{URI: *r.URI, IsURI: true}, nil
	}
	return DocumentBody{}, fmt.Errorf("document body must hold exactly one of `text` or `uri`")
}

// MarshalJSON writes {"text": ...} or {"uri": ...}.
func (b DocumentBody) MarshalJSON() ([]byte, error) {
	var w canonWriter
	w.body(b)
	return w.buf, nil
}

type rawItem struct {
	Type       *string          `json:"type"`
	Title      *string          `json:"title"`
	Body       *DocumentBody    `json:"body"`
	Mime       *string          `json:"mime"`
	Turns      *[]Turn          `json:"turns"`
	Text       *string          `json:"text"`
	Kind       *string          `json:"kind"`
	Confidence *json.Number     `json:"confidence"`
	Evidence   *string          `json:"evidence"`
	Meta       *json.RawMessage `json:"meta"`
}

// UnmarshalJSON reads a StoreItem in any key order, ignoring unknown keys.
// An item as clients write it is scanned by hand (item_scan.go); anything
// else (odd spellings, repeated keys, a refused value) goes through
// encoding/json, which also words the errors.
func (it *StoreItem) UnmarshalJSON(data []byte) error {
	out, ok := scanStoreItem(data)
	if !ok {
		var err error
		if out, err = decodeStoreItem(data); err != nil {
			return err
		}
	}
	*it = out
	return nil
}

// decodeStoreItem reads a StoreItem through encoding/json.
func decodeStoreItem(data []byte) (StoreItem, error) {
	var r rawItem
	if err := json.Unmarshal(data, &r); err != nil {
		return StoreItem{}, err
	}
	return r.item(func() (MemoryMeta, error) {
		var m MemoryMeta
		if r.Meta != nil && string(*r.Meta) != "null" {
			if err := json.Unmarshal(*r.Meta, &m); err != nil {
				return MemoryMeta{}, fmt.Errorf("meta: %w", err)
			}
		}
		return m, nil
	})
}

// item is the StoreItem r holds, its meta read by meta (r.Meta is left to it).
func (r *rawItem) item(meta func() (MemoryMeta, error)) (StoreItem, error) {
	if r.Type == nil {
		return StoreItem{}, fmt.Errorf("missing field `type`")
	}
	var out StoreItem
	switch ItemKind(*r.Type) {
	case KindDocument:
		out.Type = KindDocument
		if r.Body == nil {
			return StoreItem{}, fmt.Errorf("missing field `body`")
		}
		out.Title, out.Body, out.Mime = r.Title, *r.Body, r.Mime
	case KindConversation:
		out.Type = KindConversation
		if r.Turns == nil {
			return StoreItem{}, fmt.Errorf("missing field `turns`")
		}
		out.Turns = *r.Turns
	case KindLearning:
		out.Type = KindLearning
		if r.Text == nil {
			return StoreItem{}, fmt.Errorf("missing field `text`")
		}
		if r.Kind == nil {
			return StoreItem{}, fmt.Errorf("missing field `kind`")
		}
		lk, ok := ParseLearningKind(*r.Kind)
		if !ok {
			return StoreItem{}, fmt.Errorf("unknown learning kind `%s`, expected one of preference, fact, procedure, correction, other", *r.Kind)
		}
		if r.Confidence == nil {
			return StoreItem{}, fmt.Errorf("missing field `confidence`")
		}
		f, err := r.Confidence.Float64()
		if err != nil {
			return StoreItem{}, fmt.Errorf("confidence must be a number")
		}
		out.Text, out.Kind, out.Confidence, out.Evidence = *r.Text, lk, float32(f), r.Evidence
	default:
		return StoreItem{}, fmt.Errorf("unknown item type `%s`, expected one of document, conversation, learning", *r.Type)
	}
	m, err := meta()
	if err != nil {
		return StoreItem{}, err
	}
	out.Meta = m
	return out, nil
}

// UnmarshalJSON reads a turn, checking its role.
func (t *Turn) UnmarshalJSON(data []byte) error {
	var r rawTurn
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	out, err := r.turn()
	if err != nil {
		return err
	}
	*t = out
	return nil
}

type rawTurn struct {
	Role      *string       `json:"role"`
	Text      *string       `json:"text"`
	At        *string       `json:"at"`
	ToolCalls []ToolCallRef `json:"tool_calls"`
}

// turn is the Turn r holds.
func (r *rawTurn) turn() (Turn, error) {
	if r.Role == nil {
		return Turn{}, fmt.Errorf("missing field `role`")
	}
	role, ok := ParseRole(*r.Role)
	if !ok {
		return Turn{}, fmt.Errorf("unknown role `%s`, expected one of user, assistant, system, tool", *r.Role)
	}
	if r.Text == nil {
		return Turn{}, fmt.Errorf("missing field `text`")
	}
	out := Turn{Role: role, Text: *r.Text, ToolCalls: r.ToolCalls}
	if r.At != nil {
		at, err := ParseTime(*r.At)
		if err != nil {
			return Turn{}, err
		}
		out.At = &at
	}
	return out, nil
}

// MarshalJSON writes the turn canonically.
func (t Turn) MarshalJSON() ([]byte, error) {
	var w canonWriter
	w.turn(t)
	return w.buf, nil
}

// ParseTime reads an RFC 3339 timestamp and returns it in UTC. An instant whose
// UTC year falls outside 0000..9999 is refused: its UTC form could not be
// written back as RFC 3339, so it would not survive a round trip.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("`%s` is not an rfc 3339 timestamp", s)
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return time.Time{}, fmt.Errorf("`%s` is not an rfc 3339 timestamp", s)
	}
	return t, nil
}

// FormatTime prints t in UTC the way the reference does: no fraction when it is
// zero, else 3, 6 or 9 digits.
func FormatTime(t time.Time) string {
	t = t.UTC()
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return t.Format("2006-01-02T15:04:05Z")
	case ns%1_000_000 == 0:
		return t.Format("2006-01-02T15:04:05.000Z")
	case ns%1_000 == 0:
		return t.Format("2006-01-02T15:04:05.000000Z")
	default:
		return t.Format("2006-01-02T15:04:05.000000000Z")
	}
}

// FormatMillis prints t as a full ISO-8601 UTC instant with milliseconds, the
// format of record times and browse instants.
func FormatMillis(t time.Time) string { return t.UTC().Format(millisLayout) }

// Ptr returns a pointer to v, for optional fields.
func Ptr[T any](v T) *T { return &v }

// Deref returns *p, or the zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var z T
		return z
	}
	return *p
}
