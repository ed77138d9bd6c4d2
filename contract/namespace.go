package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Namespace limits.
const (
	MaxDepth     = 8
	MaxSegmentID = 128
	RootLabel    = "root"
)

// SegmentKind is the kind of one namespace segment.
type SegmentKind string

// Segment kinds, by their path prefix.
const (
	SegAgent     SegmentKind = "agent"
	SegTeam      SegmentKind = "team"
	SegUser      SegmentKind = "user"
	SegWorkspace SegmentKind = "ws"
	SegProject   SegmentKind = "project"
	SegSource    SegmentKind = "source"
	SegService   SegmentKind = "service"
)

// SegmentKinds lists every segment kind.
var allSegmentKinds = [...]SegmentKind{SegAgent, SegTeam, SegUser, SegWorkspace, SegProject, SegSource, SegService}

// SegmentKinds returns every value, a fresh slice the caller may change.
func SegmentKinds() []SegmentKind { return slices.Clone(allSegmentKinds[:]) }

// Segment is one `kind:id` step of a namespace path.
type Segment struct {
	Kind SegmentKind
	ID   string
}

func (s Segment) String() string { return string(s.Kind) + ":" + s.ID }

func validSegmentID(id string) bool {
	if len(id) == 0 || len(id) > MaxSegmentID {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// NewSegment validates a segment.
func NewSegment(kind SegmentKind, id string) (Segment, error) {
	if !validSegmentID(id) {
		return Segment{}, Invalid("namespace id `%s` must be 1 to 128 characters of A-Z, a-z, 0-9, `_` or `-`", id)
	}
	return Segment{Kind: kind, ID: id}, nil
}

// SanitizedSegment never fails: a valid raw id is kept; an empty one becomes `_`;
// otherwise each illegal character becomes `-`, the first 119 characters are kept
// and `-` plus the 8-hex FNV-1a of the raw bytes is appended.
func SanitizedSegment(kind SegmentKind, raw string) Segment {
	if validSegmentID(raw) {
		return Segment{Kind: kind, ID: raw}
	}
	if raw == "" {
		return Segment{Kind: kind, ID: "_"}
	}
	var b strings.Builder
	n := 0
	for _, r := range raw {
		if n == 119 {
			break
		}
		if r < 128 && validSegmentID(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
		n++
	}
	fmt.Fprintf(&b, "-%08x", FNV1a32([]byte(raw)))
	return Segment{Kind: kind, ID: b.String()}
}

// FNV1a32 is the 32-bit FNV-1a hash.
func FNV1a32(data []byte) uint32 {
	h := uint32(0x811c9dc5)
	for _, c := range data {
		h ^= uint32(c)
		h *= 0x01000193
	}
	return h
}

// Namespace is a node of the namespace tree: a path of segments from the root.
// The zero value is the root.
type Namespace struct {
	segs []Segment
}

// Root is the root namespace.
func Root() Namespace { return Namespace{} }

// NewNamespace builds a namespace from segments, checking only its depth.
func NewNamespace(segs ...Segment) (Namespace, error) {
	if len(segs) > MaxDepth {
		return Namespace{}, Invalid("a namespace nests at most 8 deep")
	}
	return Namespace{segs: append([]Segment(nil), segs...)}, nil
}

// ParseNamespace reads `root`, the empty string (both the root) or `kind:id/kind:id...`.
func ParseNamespace(s string) (Namespace, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == RootLabel {
		return Root(), nil
	}
	parts := strings.Split(s, "/")
	segs := make([]Segment, 0, len(parts))
	for _, part := range parts {
		kind, id, ok := strings.Cut(part, ":")
		if !ok {
			return Namespace{}, Invalid("namespace segment `%s` must be written kind:id", part)
		}
		sk := SegmentKind(kind)
		known := false
		for _, k := range allSegmentKinds {
			if k == sk {
				known = true
			}
		}
		if !known {
			return Namespace{}, Invalid("`%s` is not a namespace segment kind", kind)
		}
		seg, err := NewSegment(sk, id)
		if err != nil {
			return Namespace{}, err
		}
		segs = append(segs, seg)
	}
	if len(segs) > MaxDepth {
		return Namespace{}, Invalid("a namespace nests at most 8 deep")
	}
	return Namespace{segs: segs}, nil
}

// MustNamespace parses s and panics on error; for tests and fixed literals.
func MustNamespace(s string) Namespace {
	ns, err := ParseNamespace(s)
	if err != nil {
		panic(err)
	}
	return ns
}

// AgentNamespace is one sanitised agent segment under the root.
func AgentNamespace(raw string) Namespace {
	return Namespace{segs: []Segment{SanitizedSegment(SegAgent, raw)}}
}

// SourceNamespace is one sanitised source segment under the root.
func SourceNamespace(raw string) Namespace {
	return Namespace{segs: []Segment{SanitizedSegment(SegSource, raw)}}
}

// Child returns the namespace one segment below.
func (n Namespace) Child(s Segment) (Namespace, error) {
	if len(n.segs) >= MaxDepth {
		return Namespace{}, Invalid("a namespace nests at most 8 deep")
	}
	segs := make([]Segment, len(n.segs)+1)
	copy(segs, n.segs)
	segs[len(n.segs)] = s
	return Namespace{segs: segs}, nil
}

// IsRoot tells whether n is the root.
func (n Namespace) IsRoot() bool { return len(n.segs) == 0 }

// Depth is the number of segments (root 0).
func (n Namespace) Depth() int { return len(n.segs) }

// Segments returns a copy of the segments.
func (n Namespace) Segments() []Segment { return append([]Segment(nil), n.segs...) }

// Parent returns the parent, and false for the root.
func (n Namespace) Parent() (Namespace, bool) {
	if n.IsRoot() {
		return Namespace{}, false
	}
	return Namespace{segs: n.segs[:len(n.segs)-1]}, true
}

// AncestorsAndSelf lists the root first, down to n.
func (n Namespace) AncestorsAndSelf() []Namespace {
	out := make([]Namespace, 0, len(n.segs)+1)
	for i := 0; i <= len(n.segs); i++ {
		out = append(out, Namespace{segs: n.segs[:i]})
	}
	return out
}

// IsWithin tells whether n is other or below it (segment prefix).
func (n Namespace) IsWithin(other Namespace) bool {
	if len(other.segs) > len(n.segs) {
		return false
	}
	for i, s := range other.segs {
		if n.segs[i] != s {
			return false
		}
	}
	return true
}

// Equal tells whether two namespaces are the same node.
func (n Namespace) Equal(other Namespace) bool {
	return len(n.segs) == len(other.segs) && n.IsWithin(other)
}

// SharedAncestor is the nearest node at or above n whose last segment is not an agent.
func (n Namespace) SharedAncestor() Namespace {
	for i := len(n.segs); i > 0; i-- {
		if n.segs[i-1].Kind != SegAgent {
			return Namespace{segs: n.segs[:i]}
		}
	}
	return Root()
}

// String prints `root` or the path.
func (n Namespace) String() string {
	if n.IsRoot() {
		return RootLabel
	}
	parts := make([]string, len(n.segs))
	for i, s := range n.segs {
		parts[i] = s.String()
	}
	return strings.Join(parts, "/")
}

// MarshalJSON writes the printed form.
func (n Namespace) MarshalJSON() ([]byte, error) { return appendJSONString(nil, n.String()), nil }

// UnmarshalJSON parses the printed form.
func (n *Namespace) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("a namespace must be a string")
	}
	ns, err := ParseNamespace(s)
	if err != nil {
		return fmt.Errorf("%s", AsError(err).Message)
	}
	*n = ns
	return nil
}

// Reach says which namespaces a read sees: `At`, its ancestors when Inherit, and
// everything below (but service sandboxes) when Descendants.
type Reach struct {
	At          Namespace `json:"at"`
	Inherit     bool      `json:"inherit"`
	Descendants bool      `json:"descendants"`
	// Floor, with Inherit, is the depth of the shallowest ancestor admitted: 0
	// (the reference's reach) inherits up to the root, 1 stops at the first
	// segment, and so on. It is mnemo's extension, set when serve mode narrows a
	// request by a principal's bound (Intersect); on the wire it is
	// `inherit_from`, the namespace at that depth, omitted when 0.
	Floor int `json:"-"`
}

// ReachOf sees `at` and its ancestors: an agent's ordinary reach.
func ReachOf(at Namespace) Reach { return Reach{At: at, Inherit: true} }

// ReachExact sees exactly `at`.
func ReachExact(at Namespace) Reach { return Reach{At: at} }

// ReachSubtree sees `at` and everything below it but service sandboxes.
func ReachSubtree(at Namespace) Reach { return Reach{At: at, Descendants: true} }

// reachWire is a Reach on the wire.
type reachWire struct {
	At          Namespace  `json:"at"`
	Inherit     bool       `json:"inherit"`
	Descendants bool       `json:"descendants"`
	InheritFrom *Namespace `json:"inherit_from,omitempty"`
}

// MarshalJSON writes {at, inherit, descendants}, and inherit_from when the
// inherited ancestors stop below the root.
func (r Reach) MarshalJSON() ([]byte, error) {
	w := reachWire{At: r.At, Inherit: r.Inherit, Descendants: r.Descendants}
	if r.Inherit && r.Floor > 0 && r.Floor <= r.At.Depth() {
		from := Namespace{segs: r.At.segs[:r.Floor]}
		w.InheritFrom = &from
	}
	return json.Marshal(w)
}

// UnmarshalJSON applies the defaults at = root, inherit = true, descendants = false.
func (r *Reach) UnmarshalJSON(data []byte) error {
	var raw struct {
		At          *Namespace `json:"at"`
		Inherit     *bool      `json:"inherit"`
		Descendants *bool      `json:"descendants"`
		InheritFrom *Namespace `json:"inherit_from"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := Reach{Inherit: true}
	if raw.At != nil {
		out.At = *raw.At
	}
	if raw.Inherit != nil {
		out.Inherit = *raw.Inherit
	}
	if raw.Descendants != nil {
		out.Descendants = *raw.Descendants
	}
	if raw.InheritFrom != nil {
		if !out.Inherit {
			return fmt.Errorf("reach inherit_from needs inherit")
		}
		if !out.At.IsWithin(*raw.InheritFrom) {
			return fmt.Errorf("reach inherit_from `%s` is not `%s` or one of its ancestors", raw.InheritFrom, out.At)
		}
		out.Floor = raw.InheritFrom.Depth()
	}
	*r = out
	return nil
}

// Admits tells whether a read with this reach sees items at ns.
func (r Reach) Admits(ns Namespace) bool {
	if ns.Equal(r.At) {
		return true
	}
	if r.Inherit && r.At.IsWithin(ns) && ns.Depth() >= r.Floor {
		return true
	}
	if r.Descendants && ns.IsWithin(r.At) && ns.Depth() > r.At.Depth() {
		for _, s := range ns.segs[r.At.Depth():] {
			if s.Kind == SegService {
				return false
			}
		}
		return true
	}
	return false
}

// Nodes lists the namespaces read exactly, root first: `at` and, with inherit,
// its ancestors (down from the floor).
func (r Reach) Nodes() []Namespace {
	if !r.Inherit {
		return []Namespace{r.At}
	}
	return r.At.AncestorsAndSelf()[min(max(r.Floor, 0), r.At.Depth()):]
}

// AdmittedBy is the reach rule with an optional reach: no reach sees every
// namespace except service sandboxes (as ReachSubtree(Root)).
func AdmittedBy(r *Reach, ns Namespace) bool {
	if r == nil {
		return ReachSubtree(Root()).Admits(ns)
	}
	return r.Admits(ns)
}

// Within tells whether every namespace r admits is admitted by outer too.
func (r Reach) Within(outer Reach) bool {
	if !outer.Admits(r.At) {
		return false
	}
	for _, a := range r.Nodes() {
		if !outer.Admits(a) {
			return false
		}
	}
	if r.Descendants && r.At.Depth() < MaxDepth {
		if !outer.Descendants || !r.At.IsWithin(outer.At) {
			return false
		}
	}
	return true
}

// Intersect is the reach that admits exactly the namespaces both r and o
// admit, and false when they admit none in common. Serve mode runs a
// principal's request under its reach intersected with the principal's bound,
// so the bound only ever narrows what the request selects.
//
// The common namespaces always have the shape of one reach (with a floor on
// its inherited ancestors): they lie on the path to the deeper of the two
// nodes (or to the last node both paths share), a contiguous run of that
// path, and below its end only when both reaches take descendants there.
func (r Reach) Intersect(o Reach) (Reach, bool) {
	var path Namespace
	switch {
	case r.At.IsWithin(o.At):
		path = r.At
	case o.At.IsWithin(r.At):
		path = o.At
	default:
		n := 0
		for n < len(r.At.segs) && n < len(o.At.segs) && r.At.segs[n] == o.At.segs[n] {
			n++
		}
		path = Namespace{segs: r.At.segs[:n]}
	}
	lo, hi := -1, -1
	for k := 0; k <= path.Depth(); k++ {
		n := Namespace{segs: path.segs[:k]}
		if r.Admits(n) && o.Admits(n) {
			if lo < 0 {
				lo = k
			}
			hi = k
		}
	}
	if lo < 0 {
		return Reach{}, false
	}
	out := Reach{At: Namespace{segs: path.segs[:hi]}, Inherit: lo < hi}
	if out.Inherit {
		out.Floor = lo
	}
	out.Descendants = hi == path.Depth() && r.takesBelow(path) && o.takesBelow(path)
	return out, true
}

// takesBelow tells whether r admits every namespace below n but the sandboxes,
// n being r's node or below it.
func (r Reach) takesBelow(n Namespace) bool {
	if !r.Descendants || !n.IsWithin(r.At) {
		return false
	}
	for _, s := range n.segs[r.At.Depth():] {
		if s.Kind == SegService {
			return false
		}
	}
	return true
}
