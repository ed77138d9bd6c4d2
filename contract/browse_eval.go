package contract

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// sortVal is one record's value for a sort or filter field. Times are UTC
// milliseconds (the wire precision, so a record sorts the same after a JSON
// round trip); confidence is compared as the f32 it is stored as.
type sortVal struct {
	ok bool
	ms int64
	f  float32
	s  string
}

func millis(t time.Time) int64 { return t.UnixMilli() }

// fieldID numbers the sort fields so hot comparisons switch on an integer.
type fieldID uint8

const (
	fUpdated fieldID = iota
	fCreated
	fObserved
	fConfidence
	fNamespace
	fKind
	fStatus
	fUnknown
)

func fieldIDOf(field string) fieldID {
	switch field {
	case BrowseFieldUpdatedAt:
		return fUpdated
	case BrowseFieldCreatedAt:
		return fCreated
	case BrowseFieldObservedAt:
		return fObserved
	case BrowseFieldConfidence:
		return fConfidence
	case BrowseFieldNamespace:
		return fNamespace
	case BrowseFieldKind:
		return fKind
	case BrowseFieldStatus:
		return fStatus
	}
	return fUnknown
}

// recordVal reads a field of r; ok is false when the record has no value
// (confidence on a document or conversation, observed_at unset).
func recordVal(field string, r *Record) sortVal { return fieldVal(fieldIDOf(field), r) }

func fieldVal(f fieldID, r *Record) sortVal {
	switch f {
	case fUpdated:
		return sortVal{ok: true, ms: millis(r.UpdatedAt)}
	case fCreated:
		return sortVal{ok: true, ms: millis(r.CreatedAt)}
	case fObserved:
		if r.Meta.ObservedAt == nil {
			return sortVal{}
		}
		return sortVal{ok: true, ms: millis(*r.Meta.ObservedAt)}
	case fConfidence:
		if r.Confidence == nil {
			return sortVal{}
		}
		return sortVal{ok: true, f: float32(*r.Confidence)}
	case fNamespace:
		return sortVal{ok: true, s: r.Meta.Namespace.String()}
	case fKind:
		return sortVal{ok: true, s: string(r.Kind)}
	case fStatus:
		return sortVal{ok: true, s: string(r.Status)}
	}
	return sortVal{}
}

// orderKey is a resolved sort key ready for repeated comparisons.
type orderKey struct {
	f    fieldID
	vt   valType
	desc bool
}

func compileOrder(order []SortKey) []orderKey {
	out := make([]orderKey, len(order))
	for i, k := range order {
		out[i] = orderKey{f: fieldIDOf(k.Field), vt: valTypeOf(k.Field), desc: k.Dir == SortDesc}
	}
	return out
}

// comparator returns CompareRecords for one order, with namespaces printed at
// most once per record.
func comparator(order []SortKey) func(a, b *Record) int {
	keys := compileOrder(order)
	var printed map[*Record]string
	for _, k := range keys {
		if k.f == fNamespace {
			printed = map[*Record]string{}
		}
	}
	val := func(k orderKey, r *Record) sortVal {
		if k.f == fNamespace {
			s, ok := printed[r]
			if !ok {
				s = r.Meta.Namespace.String()
				printed[r] = s
			}
			return sortVal{ok: true, s: s}
		}
		return fieldVal(k.f, r)
	}
	return func(a, b *Record) int {
		for _, k := range keys {
			if c := compareTyped(k.vt, k.desc, val(k, a), val(k, b)); c != 0 {
				return c
			}
		}
		return strings.Compare(a.ID, b.ID)
	}
}

// valType says which member of sortVal a field uses.
type valType uint8

const (
	valMillis valType = iota
	valF32
	valString
)

func valTypeOf(field string) valType {
	switch {
	case isTimeField(field):
		return valMillis
	case field == BrowseFieldConfidence:
		return valF32
	}
	return valString
}

// compareVals orders two values of one field ascending; a missing value sorts
// after every present one whatever the direction, so desc negates only the
// comparison of two present values.
func compareVals(field, dir string, a, b sortVal) int {
	return compareTyped(valTypeOf(field), dir == SortDesc, a, b)
}

func compareTyped(vt valType, desc bool, a, b sortVal) int {
	switch {
	case !a.ok && !b.ok:
		return 0
	case !a.ok:
		return 1
	case !b.ok:
		return -1
	}
	var c int
	switch vt {
	case valMillis:
		c = cmp.Compare(a.ms, b.ms)
	case valF32:
		c = cmp.Compare(a.f, b.f)
	default:
		c = strings.Compare(a.s, b.s)
	}
	if desc {
		return -c
	}
	return c
}

// CompareRecords orders two records by the resolved order, then id ascending by
// bytes. A record without a value for a sort field sorts after every record with
// one, in either direction. Times compare at millisecond precision, confidence
// as an f32, namespaces by their printed form (`root` for the root).
func CompareRecords(order []SortKey, a, b *Record) int {
	for _, k := range order {
		if c := compareVals(k.Field, k.Dir, recordVal(k.Field, a), recordVal(k.Field, b)); c != 0 {
			return c
		}
	}
	return strings.Compare(a.ID, b.ID)
}

// FoldCase folds s with Unicode simple case folding, for content filters: every
// rune becomes the smallest member of its unicode.SimpleFold orbit, so `É` and
// `é` fold alike, as do `Ж` and `ж`, and `k`, `K` and the Kelvin sign.
func FoldCase(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// For ASCII letters the smallest orbit member is the upper-case letter
		// (the other members, like U+212A KELVIN SIGN, are above ASCII).
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
		case r < foldTableSize:
			r = rune(foldTable[r])
		default:
			r = foldRune(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// foldTableSize covers Latin, IPA, Greek, Cyrillic and Armenian, the cased
// scripts most text uses, so their runes fold by lookup.
const foldTableSize = 0x590

// foldTable is filled once at package initialisation and only read after.
var foldTable = func() (t [foldTableSize]uint16) {
	for r := range rune(foldTableSize) {
		t[r] = uint16(foldRune(r))
	}
	return t
}()

func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < least {
			least = f
		}
	}
	return least
}

// compiledFilter is a browse filter with its operands resolved once per query.
type compiledFilter struct {
	BrowseFilter
	needle      string    // folded content operand
	asciiNeedle bool      // the folded needle is ASCII, so ASCII texts match in place
	ns          Namespace // namespace operand
	lo, hi      int64     // half-open millisecond window of a day op
	num         float32   // confidence operand
	min, max    float32
}

func dayStartMillis(day string) (int64, bool) {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

const dayMillis = 24 * 60 * 60 * 1000

func compileFilter(f BrowseFilter) compiledFilter {
	c := compiledFilter{BrowseFilter: f}
	switch {
	case f.Field == BrowseFieldContent:
		c.needle = FoldCase(f.Text)
		c.asciiNeedle = isASCII(c.needle)
	case f.Field == BrowseFieldNamespace:
		c.ns, _ = ParseNamespace(f.Text)
	case f.Field == BrowseFieldConfidence:
		c.num, c.min, c.max = float32(f.Num), float32(f.Min), float32(f.Max)
	case isTimeField(f.Field):
		switch f.Op {
		case "on_day":
			start, _ := dayStartMillis(f.Day)
			c.lo, c.hi = start, start+dayMillis
		case "before_day":
			start, _ := dayStartMillis(f.Day)
			c.hi = start
		case "after_day":
			start, _ := dayStartMillis(f.Day)
			c.lo = start + dayMillis
		case "between_days":
			from, _ := dayStartMillis(f.FromDay)
			until, _ := dayStartMillis(f.UntilDay)
			c.lo, c.hi = from, until+dayMillis
		}
	}
	return c
}

// admits applies the filter to r, with r's folded text computed at most once.
func (c *compiledFilter) admits(r *Record, folded func() string) bool {
	switch c.Field {
	case BrowseFieldStatus:
		return slices.Contains(c.Values, string(r.Status)) == (c.Op == "in")
	case BrowseFieldKind:
		return slices.Contains(c.Values, string(r.Kind)) == (c.Op == "in")
	case BrowseFieldContent:
		if c.asciiNeedle && isASCII(r.Text) {
			return contentMatchASCII(c.Op, r.Text, c.needle)
		}
		return ContentMatches(c.Op, folded(), c.needle)
	case BrowseFieldNamespace:
		if c.Op == "equals" {
			return r.Meta.Namespace.Equal(c.ns)
		}
		return r.Meta.Namespace.IsWithin(c.ns)
	case BrowseFieldConfidence:
		if r.Confidence == nil {
			return false
		}
		v := float32(*r.Confidence)
		switch c.Op {
		case "eq":
			return v == c.num
		case "neq":
			return v != c.num
		case "gt":
			return v > c.num
		case "gte":
			return v >= c.num
		case "lt":
			return v < c.num
		case "lte":
			return v <= c.num
		case "between":
			return v >= c.min && v <= c.max
		}
	default:
		v := recordVal(c.Field, r)
		if !v.ok {
			return false
		}
		switch c.Op {
		case "on_day", "between_days":
			return v.ms >= c.lo && v.ms < c.hi
		case "before_day":
			return v.ms < c.hi
		case "after_day":
			return v.ms >= c.lo
		}
	}
	return false
}

// matcher is a query compiled for matching many records.
type matcher struct {
	q       *BrowseQuery
	filters []compiledFilter
	nowMS   int64
}

func (q *BrowseQuery) compile() *matcher {
	m := &matcher{q: q, filters: make([]compiledFilter, len(q.Filters))}
	for i, f := range q.Filters {
		m.filters[i] = compileFilter(f)
	}
	if q.Now != nil {
		m.nowMS = millis(*q.Now)
	}
	return m
}

func (m *matcher) matches(r *Record) bool {
	q := m.q
	if !q.Filter.Matches(r.Kind, &r.Meta) || !q.Filter.AdmitsStatus(r.Status, false) {
		return false
	}
	if q.Status != nil && !slices.Contains(q.Status, r.Status) {
		return false
	}
	if q.Kind != nil && !slices.Contains(q.Kind, r.Kind) {
		return false
	}
	if q.Now != nil && r.ExpiresAt != nil && millis(*r.ExpiresAt) <= m.nowMS {
		return false
	}
	var folded string
	done := false
	fold := func() string {
		if !done {
			folded, done = FoldCase(r.Text), true
		}
		return folded
	}
	for i := range m.filters {
		if !m.filters[i].admits(r, fold) {
			return false
		}
	}
	return true
}

// canonicalFilter is a filter's identity string: field|op|operands, sets sorted.
func canonicalFilter(f BrowseFilter) string {
	parts := []string{f.Field, f.Op}
	switch {
	case f.Field == BrowseFieldStatus || f.Field == BrowseFieldKind:
		vals := slices.Clone(f.Values)
		slices.Sort(vals)
		parts = append(parts, strings.Join(slices.Compact(vals), ","))
	case f.Field == BrowseFieldContent:
		parts = append(parts, f.Text)
	case f.Field == BrowseFieldNamespace:
		if ns, err := ParseNamespace(f.Text); err == nil {
			parts = append(parts, ns.String())
		} else {
			parts = append(parts, f.Text)
		}
	case f.Field == BrowseFieldConfidence && f.Op == "between":
		parts = append(parts, formatNum(f.Min), formatNum(f.Max))
	case f.Field == BrowseFieldConfidence:
		parts = append(parts, formatNum(f.Num))
	case f.Op == "between_days":
		parts = append(parts, f.FromDay, f.UntilDay)
	default:
		parts = append(parts, f.Day)
	}
	return strings.Join(parts, "|")
}

func sortedSet[T ~string](vals []T) []string {
	if vals == nil {
		return nil
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// canonicalMetaFilter is the MetaFilter's JSON with its sets sorted, or null when empty.
func canonicalMetaFilter(f MetaFilter) json.RawMessage {
	if f.IsEmpty() {
		return json.RawMessage("null")
	}
	c := f.Clone()
	slices.Sort(c.TagsAny)
	c.TagsAny = slices.Compact(c.TagsAny)
	slices.Sort(c.Kinds)
	c.Kinds = slices.Compact(c.Kinds)
	slices.Sort(c.Sources)
	c.Sources = slices.Compact(c.Sources)
	slices.Sort(c.Statuses)
	c.Statuses = slices.Compact(c.Statuses)
	b, err := json.Marshal(c)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// browseIdentity is the canonical description a cursor fingerprint hashes.
type browseIdentity struct {
	Filter  json.RawMessage `json:"filter"`
	Status  []string        `json:"status"`
	Kind    []string        `json:"kind"`
	Now     *string         `json:"now"`
	Filters []string        `json:"filters"`
	Order   []string        `json:"order"`
}

func (q BrowseQuery) identity() string {
	id := browseIdentity{
		Filter:  canonicalMetaFilter(q.Filter),
		Status:  sortedSet(q.Status),
		Kind:    sortedSet(q.Kind),
		Filters: make([]string, len(q.Filters)),
	}
	if q.Now != nil {
		id.Now = Ptr(FormatMillis(*q.Now))
	}
	for i, f := range q.Filters {
		id.Filters[i] = canonicalFilter(f)
	}
	slices.Sort(id.Filters)
	for _, k := range q.Order() {
		id.Order = append(id.Order, k.Field+":"+k.Dir)
	}
	b, err := json.Marshal(id)
	if err != nil {
		return ""
	}
	return string(b)
}

// topK keeps the k smallest records offered so far under an order, in a
// bounded max-heap, so a page is picked in O(n log k) without holding or
// sorting the whole matching set.
type topK struct {
	less func(a, b *Record) int
	k    int
	heap []*Record // heap[0] is the greatest kept
}

func newTopK(order []SortKey, k, capHint int) *topK {
	return &topK{less: comparator(order), k: k, heap: make([]*Record, 0, max(0, min(k, capHint)))}
}

func (t *topK) offer(rec *Record) {
	h := t.heap
	if len(h) < t.k {
		h = append(h, rec)
		for i := len(h) - 1; i > 0; {
			parent := (i - 1) / 2
			if t.less(h[i], h[parent]) <= 0 {
				break
			}
			h[i], h[parent] = h[parent], h[i]
			i = parent
		}
		t.heap = h
		return
	}
	if len(h) == 0 || t.less(rec, h[0]) >= 0 {
		return
	}
	h[0] = rec
	for i := 0; ; {
		big, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && t.less(h[l], h[big]) > 0 {
			big = l
		}
		if r < len(h) && t.less(h[r], h[big]) > 0 {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// sorted returns the kept records in order.
func (t *topK) sorted() []*Record {
	slices.SortFunc(t.heap, t.less)
	return t.heap
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// upperPrefix tells whether text begins with needle once text's ASCII letters
// are upper-cased: FoldCase on ASCII text, without building the folded copy.
func upperPrefix(text, needle string) bool {
	if len(text) < len(needle) {
		return false
	}
	for i := 0; i < len(needle); i++ {
		b := text[i]
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		if b != needle[i] {
			return false
		}
	}
	return true
}

// contentMatchASCII is the content ops for an ASCII text and an ASCII folded needle.
func contentMatchASCII(op, text, needle string) bool {
	contains := func() bool {
		for i := 0; i+len(needle) <= len(text); i++ {
			if upperPrefix(text[i:], needle) {
				return true
			}
		}
		return false
	}
	switch op {
	case "contains":
		return contains()
	case "not_contains":
		return !contains()
	case "equals":
		return len(text) == len(needle) && upperPrefix(text, needle)
	case "not_equals":
		return !(len(text) == len(needle) && upperPrefix(text, needle))
	case "starts_with":
		return upperPrefix(text, needle)
	case "ends_with":
		return len(text) >= len(needle) && upperPrefix(text[len(text)-len(needle):], needle)
	}
	return false
}

// ContentMatches applies a browse content op to a case-folded text and a
// case-folded needle (both through FoldCase); engines that keep folded text
// use it so their content filters agree with Matches.
func ContentMatches(op, foldedText, foldedNeedle string) bool {
	switch op {
	case "contains":
		return strings.Contains(foldedText, foldedNeedle)
	case "not_contains":
		return !strings.Contains(foldedText, foldedNeedle)
	case "equals":
		return foldedText == foldedNeedle
	case "not_equals":
		return foldedText != foldedNeedle
	case "starts_with":
		return strings.HasPrefix(foldedText, foldedNeedle)
	case "ends_with":
		return strings.HasSuffix(foldedText, foldedNeedle)
	}
	return false
}
