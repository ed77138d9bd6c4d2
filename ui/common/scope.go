package common

import (
	"strings"

	"mnemo/contract"
)

// Crumb is one step of a drill-down: a facet narrowed to a value. Subtree
// crumbs (namespace tree nodes with children) admit the node's descendants too.
type Crumb struct {
	Facet   contract.Facet
	Value   string
	Subtree bool
}

// String is the crumb in words: "kind=learning", "namespace within team:acme".
func (c Crumb) String() string {
	if c.Subtree {
		return string(c.Facet) + " within " + c.Value
	}
	return string(c.Facet) + "=" + c.Value
}

// Scope is the current drill-down: the session's base filter (its reach) and the
// crumbs narrowed on top of it. Scopes are values; narrowing returns a new one.
type Scope struct {
	Base   contract.MetaFilter
	Crumbs []Crumb
}

// Narrow returns the scope with c added. Narrowing a facet that is already in the
// scope replaces its crumb, because the contract's narrow replaces that field.
func (s Scope) Narrow(c Crumb) (Scope, error) {
	out := Scope{Base: s.Base}
	for _, old := range s.Crumbs {
		if old.Facet != c.Facet {
			out.Crumbs = append(out.Crumbs, old)
		}
	}
	out.Crumbs = append(out.Crumbs, c)
	if _, err := out.Filter(); err != nil {
		return s, err
	}
	return out, nil
}

// Widen returns the scope without its last crumb.
func (s Scope) Widen() Scope {
	if len(s.Crumbs) == 0 {
		return s
	}
	return Scope{Base: s.Base, Crumbs: append([]Crumb(nil), s.Crumbs[:len(s.Crumbs)-1]...)}
}

// IsRoot tells whether nothing has been narrowed.
func (s Scope) IsRoot() bool { return len(s.Crumbs) == 0 }

// Filter folds the crumbs over the base filter with the contract's narrow.
func (s Scope) Filter() (contract.MetaFilter, error) {
	f := s.Base.Clone()
	for _, c := range s.Crumbs {
		if c.Subtree && c.Facet == contract.FacetNamespace {
			ns, err := contract.ParseNamespace(c.Value)
			if err != nil {
				return contract.MetaFilter{}, err
			}
			r := contract.ReachSubtree(ns)
			f.Reach = &r
			continue
		}
		var err error
		if f, err = c.Facet.Narrow(f, c.Value); err != nil {
			return contract.MetaFilter{}, err
		}
	}
	return f, nil
}

// MustFilter is Filter for scopes built by Narrow, which already checked them.
func (s Scope) MustFilter() contract.MetaFilter {
	f, err := s.Filter()
	if err != nil {
		return s.Base.Clone()
	}
	return f
}

// Words is the scope as breadcrumbs: "kind=learning › tag=style", or "everything".
func (s Scope) Words(sep string) string {
	if len(s.Crumbs) == 0 {
		return "everything"
	}
	parts := make([]string, len(s.Crumbs))
	for i, c := range s.Crumbs {
		parts[i] = c.String()
	}
	return strings.Join(parts, sep)
}

// Key identifies the scope, for caches and staleness checks.
func (s Scope) Key() string { return s.Words("\x00") }
