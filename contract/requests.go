package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Contract limits.
const (
	MaxStoreMany     = 100
	MaxGetIDs        = 200
	MaxBuckets       = 500
	MaxScanLimit     = 50000
	DefaultScanLimit = 5000
	ScanPage         = 200
	BeliefTag        = "belief"
)

// F32 is an f32 that marshals in ryu's form, for scores and confidences.
type F32 float32

// MarshalJSON writes the shortest round-trip f32.
func (f F32) MarshalJSON() ([]byte, error) { return []byte(FormatF32(float32(f))), nil }

// Hit is one item in a listing or a ranked result.
type Hit struct {
	ID         string     `json:"id"`
	Kind       ItemKind   `json:"kind"`
	Text       string     `json:"text"`
	Meta       MemoryMeta `json:"meta"`
	Score      F32        `json:"score"`
	Confidence *F32       `json:"confidence,omitempty"`
	// Evidence names the records a belief was drawn from (beliefs only).
	Evidence []string `json:"evidence,omitempty"`
}

// HitOf returns the listing hit (score 0) of a stored item.
func HitOf(id string, it *StoreItem) Hit {
	h := Hit{ID: id, Kind: it.Type, Text: it.RenderText(), Meta: it.Meta}
	if it.Type == KindLearning {
		c := F32(it.Confidence)
		h.Confidence = &c
	}
	return h
}

// Citation is one item a recall answer draws on.
type Citation struct {
	ID      string     `json:"id"`
	Kind    ItemKind   `json:"kind"`
	Snippet string     `json:"snippet"`
	Meta    MemoryMeta `json:"meta"`
	Score   *F32       `json:"score,omitempty"`
}

// RecallAnswer is a synthesised answer with its citations.
type RecallAnswer struct {
	Answer    string     `json:"answer"`
	Citations []Citation `json:"citations"`
	Model     *string    `json:"model,omitempty"`
}

// TimeHint names the local calendar days a question is about.
type TimeHint struct {
	From string  `json:"from"`
	To   string  `json:"to"`
	Zone *string `json:"zone,omitempty"`
}

// Validate checks the hint's order and zone.
func (h TimeHint) Validate() error {
	from, err := time.Parse("2006-01-02", h.From)
	if err != nil {
		return Invalid("time hint day `%s` must be YYYY-MM-DD", h.From)
	}
	to, err := time.Parse("2006-01-02", h.To)
	if err != nil {
		return Invalid("time hint day `%s` must be YYYY-MM-DD", h.To)
	}
	if from.After(to) {
		return Invalid("time hint runs backwards: %s > %s", h.From, h.To)
	}
	if h.Zone != nil {
		if _, err := time.LoadLocation(*h.Zone); err != nil || *h.Zone == "" || *h.Zone == "Local" {
			return Invalid("time hint zone %q is not an IANA zone", *h.Zone)
		}
	}
	return nil
}

// Covers tells whether instant at falls on one of the hint's days in its zone.
func (h TimeHint) Covers(at time.Time) bool {
	loc := time.UTC
	if h.Zone != nil {
		if l, err := time.LoadLocation(*h.Zone); err == nil {
			loc = l
		}
	}
	d := at.In(loc).Format("2006-01-02")
	return d >= h.From && d <= h.To
}

// RankByHint moves hits observed on the hint's days first, keeping order within each group.
func (h TimeHint) RankByHint(hits []Hit) []Hit {
	return RankByHintOf(h, hits, func(x *Hit) *time.Time { return x.Meta.ObservedAt })
}

// RankByHintOf is RankByHint over any ranked list, observedAt telling when
// each entry was observed: engines rank their own rows (a hit is made only for
// the page kept), and all of them order by a hint this one way.
func RankByHintOf[T any](h TimeHint, ranked []T, observedAt func(*T) *time.Time) []T {
	out := make([]T, 0, len(ranked))
	covered := func(x *T) bool {
		at := observedAt(x)
		return at != nil && h.Covers(*at)
	}
	for i := range ranked {
		if covered(&ranked[i]) {
			out = append(out, ranked[i])
		}
	}
	for i := range ranked {
		if !covered(&ranked[i]) {
			out = append(out, ranked[i])
		}
	}
	return out
}

// RecallRequest asks a question of memory.
type RecallRequest struct {
	Question     string     `json:"question"`
	Filter       MetaFilter `json:"filter"`
	Limit        int        `json:"limit"`
	Instructions *string    `json:"instructions,omitempty"`
	RefersTo     *TimeHint  `json:"refers_to,omitempty"`
}

// Validate checks the request with the reference's messages.
func (r RecallRequest) Validate() error {
	if strings.TrimSpace(r.Question) == "" {
		return Invalid("recall question must not be empty")
	}
	if r.Limit <= 0 {
		return Invalid("recall limit must be positive")
	}
	if r.RefersTo != nil {
		return r.RefersTo.Validate()
	}
	return nil
}

// FetchMode is how fetch ranks.
type FetchMode string

// Fetch modes, in FetchModes order.
const (
	ModeKeyword FetchMode = "keyword"
	ModeVector  FetchMode = "vector"
	ModeHybrid  FetchMode = "hybrid"
)

// FetchModes lists every fetch mode.
var allFetchModes = [...]FetchMode{ModeKeyword, ModeVector, ModeHybrid}

// FetchModes returns every value, a fresh slice the caller may change.
func FetchModes() []FetchMode { return slices.Clone(allFetchModes[:]) }

// ParseFetchMode parses a wire fetch mode.
func ParseFetchMode(s string) (FetchMode, bool) {
	for _, m := range allFetchModes {
		if string(m) == s {
			return m, true
		}
	}
	return "", false
}

// UnmarshalJSON refuses unknown modes.
func (m *FetchMode) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("fetch mode must be a string")
	}
	fm, ok := ParseFetchMode(s)
	if !ok {
		return fmt.Errorf("`%s` is not a fetch mode, expected one of keyword, vector, hybrid", s)
	}
	*m = fm
	return nil
}

// FetchRequest is ranked raw retrieval in one mode.
type FetchRequest struct {
	Query     string     `json:"query"`
	Mode      FetchMode  `json:"mode"`
	Filter    MetaFilter `json:"filter"`
	Limit     int        `json:"limit"`
	Cursor    *string    `json:"cursor,omitempty"`
	Beliefs   int        `json:"beliefs,omitempty"`
	RefersTo  *TimeHint  `json:"refers_to,omitempty"`
	MaxScopes *int       `json:"max_scopes,omitempty"`
}

// Validate checks the request (not its mode; engines call Descriptor.EnsureMode).
func (r FetchRequest) Validate() error {
	if strings.TrimSpace(r.Query) == "" {
		return Invalid("fetch query must not be empty")
	}
	if r.Limit <= 0 {
		return Invalid("fetch limit must be positive")
	}
	if r.MaxScopes != nil && *r.MaxScopes <= 0 {
		return Invalid("fetch max_scopes must be positive")
	}
	if r.RefersTo != nil {
		return r.RefersTo.Validate()
	}
	return nil
}

// FetchPage is one page of ranked hits.
type FetchPage struct {
	Hits       []Hit   `json:"hits"`
	NextCursor *string `json:"next_cursor,omitempty"`
	Beliefs    []Hit   `json:"beliefs,omitempty"`
}

// ListRequest pages through items without a query.
type ListRequest struct {
	Filter MetaFilter `json:"filter"`
	Limit  int        `json:"limit"`
	Cursor *string    `json:"cursor,omitempty"`
}

// Validate checks the limit.
func (r ListRequest) Validate() error {
	if r.Limit <= 0 {
		return Invalid("list limit must be positive")
	}
	return nil
}

// ListPage is one page of a listing; every hit has score 0.
type ListPage struct {
	Items      []Hit   `json:"items"`
	NextCursor *string `json:"next_cursor,omitempty"`
}

// Exported is one stored item as export hands it back.
type Exported struct {
	ID   string    `json:"id"`
	Item StoreItem `json:"item"`
}

// ExportPage is one page of an export.
type ExportPage struct {
	Items      []Exported `json:"items"`
	Incomplete []string   `json:"incomplete,omitempty"`
	NextCursor *string    `json:"next_cursor,omitempty"`
}

// StoreReceipt says what a store did.
type StoreReceipt struct {
	ID       string `json:"id"`
	Replayed bool   `json:"replayed"`
}

// WaitFor says when a store returns.
type WaitFor string

// Wait modes.
const (
	WaitVisible  WaitFor = "visible"
	WaitAccepted WaitFor = "accepted"
)

// WriteOptions are store_with's options, with mnemo's status and expiry extensions.
type WriteOptions struct {
	Wait      WaitFor    `json:"wait,omitempty"`
	Status    Status     `json:"status,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Validate checks the options' enums.
func (o WriteOptions) Validate() error {
	switch o.Wait {
	case "", WaitVisible, WaitAccepted:
	default:
		return Invalid("wait must be `visible` or `accepted`, not `%s`", o.Wait)
	}
	switch o.Status {
	case "", StatusActive, StatusCandidate:
	default:
		return Invalid("a stored item's status must be `active` or `candidate`, not `%s`", o.Status)
	}
	return nil
}

// ValidateMany checks a store_many batch: 1..100 items, each valid.
func ValidateMany(items []StoreItem) error {
	if len(items) == 0 || len(items) > MaxStoreMany {
		return Invalid("store_many takes between 1 and 100 items")
	}
	return validateEach(items)
}

// MaxStoreBulk is the most items an engine's bulk store writes in one
// transaction.
const MaxStoreBulk = 2000

// BulkStorer is an engine that stores more than a store_many in one
// transaction, beyond the contract: engine/bolt, engine/postgres, and
// server/local.Store while this process holds the store. BulkItems is how
// many StoreBulk takes at once; each call is durable when it returns.
// `mnemo import` and the bench's load write through it.
type BulkStorer interface {
	BulkItems() int
	StoreBulk(ctx context.Context, items []StoreItem, opts WriteOptions) ([]StoreReceipt, error)
}

// BulkPipeliner is a BulkStorer that prepares a bulk store while the one
// before it commits. StartBulk prepares items and queues their transaction
// after those of the StartBulk calls that returned before it was called; its
// wait answers what StoreBulk would have, durable when it returns. A loader
// starts batch n+1 and then waits for batch n.
type BulkPipeliner interface {
	BulkStorer
	StartBulk(ctx context.Context, items []StoreItem, opts WriteOptions) (wait func() ([]StoreReceipt, error))
}

// ValidateBulk checks an engine's bulk store (`mnemo import`'s StoreBulk,
// beyond the contract): 1..MaxStoreBulk items, each valid, and the options.
func ValidateBulk(items []StoreItem, opts WriteOptions) error {
	if len(items) == 0 || len(items) > MaxStoreBulk {
		return Invalid("a bulk store takes between 1 and %d items", MaxStoreBulk)
	}
	if err := validateEach(items); err != nil {
		return err
	}
	return opts.Validate()
}

func validateEach(items []StoreItem) error {
	for i := range items {
		if err := items[i].Validate(); err != nil {
			return err
		}
	}
	return nil
}

// ForgetTarget is what a forget removes: ids (anywhere) or everything matching a filter.
type ForgetTarget struct {
	IDs    []string
	Filter *MetaFilter
}

// ForgetIDs targets ids.
func ForgetIDs(ids ...string) ForgetTarget { return ForgetTarget{IDs: ids, Filter: nil} }

// ForgetFilter targets a filter.
func ForgetFilter(f MetaFilter) ForgetTarget { return ForgetTarget{Filter: &f} }

// MarshalJSON writes {"ids": [...]} or {"filter": {...}}.
func (t ForgetTarget) MarshalJSON() ([]byte, error) {
	if t.Filter != nil {
		return json.Marshal(struct {
			Filter MetaFilter `json:"filter"`
		}{*t.Filter})
	}
	return json.Marshal(struct {
		IDs []string `json:"ids"`
	}{EmptyIfNil(t.IDs)})
}

// UnmarshalJSON reads exactly one of ids or filter.
func (t *ForgetTarget) UnmarshalJSON(data []byte) error {
	var raw struct {
		IDs    *[]string   `json:"ids"`
		Filter *MetaFilter `json:"filter"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	switch {
	case raw.IDs != nil && raw.Filter == nil:
		*t = ForgetTarget{IDs: EmptyIfNil(*raw.IDs)}
	case raw.Filter != nil && raw.IDs == nil:
		*t = ForgetTarget{Filter: raw.Filter}
	default:
		return fmt.Errorf("a forget target is exactly one of {\"ids\": [...]} or {\"filter\": {...}}")
	}
	return nil
}

// Validate refuses no ids and the empty filter.
func (t ForgetTarget) Validate() error {
	if t.Filter != nil {
		if t.Filter.IsEmpty() {
			return Invalid("forget refuses an empty filter, which would mean everything")
		}
		return nil
	}
	if len(t.IDs) == 0 {
		return Invalid("forget needs at least one id")
	}
	return nil
}

// ForgetReport counts what a forget removed.
type ForgetReport struct {
	Forgotten int `json:"forgotten"`
}

// ForgetWithinIDs validates ids for forget_within and dedupes them keeping first order.
func ForgetWithinIDs(ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, Invalid("forget needs at least one id")
	}
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if strings.TrimSpace(id) == "" {
			return nil, Invalid("an id must not be blank")
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// ForgetWithinRequest is the wire body of forget_within.
type ForgetWithinRequest struct {
	IDs   []string `json:"ids"`
	Reach Reach    `json:"reach"`
}

// EraseRequest deletes for good every item of kinds at a reach.
type EraseRequest struct {
	Reach     Reach      `json:"reach"`
	Kinds     []ItemKind `json:"kinds,omitempty"`
	WholeTree bool       `json:"whole_tree,omitempty"`
}

// Validate refuses erasing the whole tree by accident.
func (r EraseRequest) Validate() error {
	if r.Reach.At.IsRoot() && r.Reach.Descendants && len(r.Kinds) == 0 && !r.WholeTree {
		return Invalid("erasing the whole tree needs whole_tree: true")
	}
	return nil
}

// EraseReport says what an erase removed.
type EraseReport struct {
	ErasedScopes int      `json:"erased_scopes"`
	Receipts     []string `json:"receipts,omitempty"`
}

// GetRequest reads items by id.
type GetRequest struct {
	IDs   []string `json:"ids"`
	Reach *Reach   `json:"reach,omitempty"`
}

// Validate checks 1..200 non-blank ids.
func (r GetRequest) Validate() error {
	if len(r.IDs) == 0 || len(r.IDs) > MaxGetIDs {
		return Invalid("get takes between 1 and 200 ids")
	}
	for _, id := range r.IDs {
		if strings.TrimSpace(id) == "" {
			return Invalid("an id must not be blank")
		}
	}
	return nil
}

// InRequestOrder returns each requested id's hit once, in the order ids were named.
func InRequestOrder(ids []string, found map[string]Hit) []Hit {
	out := make([]Hit, 0, len(found))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if h, ok := found[id]; ok {
			out = append(out, h)
		}
	}
	return out
}

// Consolidation says how an engine builds beliefs.
type Consolidation string

// Consolidation modes.
const (
	ConsolidationNone      Consolidation = "none"
	ConsolidationOnDemand  Consolidation = "on_demand"
	ConsolidationScheduled Consolidation = "scheduled"
	ConsolidationAutomatic Consolidation = "automatic"
)

// ConsolidateRequest asks an engine to build beliefs.
type ConsolidateRequest struct {
	Reach Reach      `json:"reach"`
	Kinds []ItemKind `json:"kinds,omitempty"`
}

// Validate refuses a kind named twice.
func (r ConsolidateRequest) Validate() error {
	seen := map[ItemKind]bool{}
	for _, k := range r.Kinds {
		if seen[k] {
			return Invalid("consolidate names the kind `%s` twice", k)
		}
		seen[k] = true
	}
	return nil
}

// ConsolidateStatus is the state of a consolidation.
type ConsolidateStatus string

// Consolidation states.
const (
	ConsolidateStarted   ConsolidateStatus = "started"
	ConsolidateScheduled ConsolidateStatus = "scheduled"
	ConsolidateCompleted ConsolidateStatus = "completed"
)

// ConsolidateReceipt says what a consolidation did.
type ConsolidateReceipt struct {
	Status ConsolidateStatus `json:"status"`
	Jobs   []string          `json:"jobs,omitempty"`
	Scopes int               `json:"scopes"`
	Built  *int              `json:"built,omitempty"`
}

// BeliefsRequest reads derived beliefs.
type BeliefsRequest struct {
	Reach Reach   `json:"reach"`
	Query *string `json:"query,omitempty"`
	Limit int     `json:"limit"`
}

// Validate checks the limit and query.
func (r BeliefsRequest) Validate() error {
	if r.Limit <= 0 {
		return Invalid("a beliefs limit must be positive")
	}
	if r.Query != nil && strings.TrimSpace(*r.Query) == "" {
		return Invalid("a beliefs query must not be blank")
	}
	return nil
}

// Descriptor statically describes an engine.
type Descriptor struct {
	ID              string        `json:"id"`
	Label           string        `json:"label"`
	Description     string        `json:"description"`
	Hosted          bool          `json:"hosted"`
	NeedsEndpoint   bool          `json:"needs_endpoint"`
	NeedsKey        bool          `json:"needs_key"`
	DefaultEndpoint *string       `json:"default_endpoint"`
	FetchModes      []FetchMode   `json:"fetch_modes"`
	Consolidation   Consolidation `json:"consolidation"`
}

// Supports tells whether the engine serves a fetch mode.
func (d Descriptor) Supports(m FetchMode) bool { return slices.Contains(d.FetchModes, m) }

// EnsureMode refuses a mode the engine does not serve.
func (d Descriptor) EnsureMode(m FetchMode) error {
	if !d.Supports(m) {
		return Unsupported("engine `%s` does not offer %s fetch", d.ID, m)
	}
	return nil
}

// HealthState is ok, degraded or down.
type HealthState string

// Health states.
const (
	HealthOK       HealthState = "ok"
	HealthDegraded HealthState = "degraded"
	HealthDown     HealthState = "down"
)

// Health is how an engine is doing; reasons never carry credentials.
type Health struct {
	State  HealthState `json:"state"`
	Reason string      `json:"reason,omitempty"`
}

// IsServing is false only when down.
func (h Health) IsServing() bool { return h.State != HealthDown }
