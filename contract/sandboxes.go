package contract

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// NamespaceCounter is an engine that counts its records per namespace,
// service sandboxes included (the contract's reads never enter a sandbox
// without a reach naming it): engine/bolt, engine/memory, engine/postgres and
// the shared local store. Keys are printed namespaces ("root" for the root).
type NamespaceCounter interface {
	NamespaceCounts(ctx context.Context) (map[string]int, error)
}

// Sandbox is one service sandbox and how many records its reach
// (ReachSubtree(At): At and what lies below it outside further sandboxes)
// sees.
type Sandbox struct {
	At      Namespace `json:"namespace"`
	Records int       `json:"records"`
}

// Sandboxes groups per-namespace counts by the service sandbox each
// namespace lies in (the namespace up to its last service segment), in
// namespace order; namespaces outside every sandbox are left out. The
// sandboxes' reaches together with ReachSubtree(Root()) see every record
// once.
func Sandboxes(counts map[string]int) []Sandbox {
	by := map[string]*Sandbox{}
	for printed, n := range counts {
		ns, err := ParseNamespace(printed)
		if err != nil || n == 0 {
			continue
		}
		segs := ns.Segments()
		last := -1
		for i, s := range segs {
			if s.Kind == SegService {
				last = i
			}
		}
		if last < 0 {
			continue
		}
		at, err := NewNamespace(segs[:last+1]...)
		if err != nil {
			continue
		}
		key := at.String()
		if by[key] == nil {
			by[key] = &Sandbox{At: at}
		}
		by[key].Records += n
	}
	out := make([]Sandbox, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Sandbox) int { return strings.Compare(a.At.String(), b.At.String()) })
	return out
}

// SandboxWalks plans a walk of every record f matches (an export, a copy):
// f itself, which never enters a service sandbox unless its reach names one,
// and, with include, f once more per sandbox (its reach set to the
// sandbox's subtree). It also returns the sandboxes the walks leave out, so
// the caller can say so. An engine that cannot count its namespaces
// (NamespaceCounter: a remote server) leaves nothing it knows of out, and
// cannot include sandboxes; a filter whose reach already names what to walk
// takes no include.
func SandboxWalks(ctx context.Context, e Engine, f MetaFilter, include bool) (walks []MetaFilter, left []Sandbox, err error) {
	walks = []MetaFilter{f}
	if f.Reach != nil {
		if include {
			return nil, nil, Invalid("--sandboxes walks every service sandbox; the filter's reach already names what to walk (leave one of them out)")
		}
		return walks, nil, nil
	}
	nc, ok := e.(NamespaceCounter)
	if !ok {
		if include {
			return nil, nil, Unsupported("this store cannot list its service sandboxes (a server); name one with a filter's reach, e.g. {\"reach\":{\"at\":\"team:acme/service:digest\",\"descendants\":true}}")
		}
		return walks, nil, nil
	}
	counts, err := nc.NamespaceCounts(ctx)
	if err != nil {
		return nil, nil, err
	}
	sbs := Sandboxes(counts)
	if !include {
		return walks, sbs, nil
	}
	for _, sb := range sbs {
		g := f
		r := ReachSubtree(sb.At)
		g.Reach = &r
		walks = append(walks, g)
	}
	return walks, nil, nil
}

// SandboxNote says in words which sandboxes a walk left out, for stderr:
// "68 records in 1 service sandbox (team:acme/service:nightly-digest: 68)".
func SandboxNote(left []Sandbox) string {
	n := 0
	parts := make([]string, len(left))
	for i, s := range left {
		n += s.Records
		parts[i] = fmt.Sprintf("%s: %d", s.At, s.Records)
	}
	noun, boxes := "records", "service sandboxes"
	if n == 1 {
		noun = "record"
	}
	if len(left) == 1 {
		boxes = "service sandbox"
	}
	return fmt.Sprintf("%d %s in %d %s (%s)", n, noun, len(left), boxes, strings.Join(parts, ", "))
}
