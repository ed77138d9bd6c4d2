package explore

import (
	"sort"
	"strings"

	"mnemo/contract"
)

type nodeKind int

const (
	nodeRoot nodeKind = iota
	nodeValue
	nodeMissing
	nodeMore
	nodeLoading
)

// node is one row of the facet tree: a facet root, a value (or a path/namespace
// tree node with its subtree count), or the missing and more rows.
type node struct {
	kind     nodeKind
	facet    contract.Facet
	label    string
	value    string
	count    uint64
	depth    int
	expanded bool
	children []*node
	// subtree marks namespace nodes with children: narrowing admits descendants.
	subtree bool
	// distinct is a root's number of distinct values under the scope; -1 unknown.
	distinct int
	// limit is how many buckets a root asks for; more raises it.
	limit int
	// max is the largest count among siblings, for the bars.
	max    uint64
	parent *node
}

// isTreeFacet tells which facets expand as real trees rather than flat buckets.
func isTreeFacet(f contract.Facet) bool {
	return f == contract.FacetFolder || f == contract.FacetFilePath || f == contract.FacetNamespace
}

// splitPath splits a folder, file path or namespace into its tree segments,
// returning each segment's label and the full prefix up to it.
func splitPath(f contract.Facet, value string) (labels, prefixes []string) {
	if f == contract.FacetNamespace && value == contract.RootLabel {
		return []string{value}, []string{value}
	}
	parts := strings.Split(value, "/")
	lead := ""
	if strings.HasPrefix(value, "/") && len(parts) > 1 {
		lead = "/"
		parts = parts[1:]
	}
	prefix := lead
	for i, p := range parts {
		if p == "" {
			continue
		}
		if i > 0 || lead == "" {
			if prefix != "" && prefix != "/" {
				prefix += "/"
			}
		}
		prefix += p
		label := p
		if lead == "/" && len(labels) == 0 {
			label = "/" + p
		}
		labels = append(labels, label)
		prefixes = append(prefixes, prefix)
	}
	if len(labels) == 0 {
		return []string{value}, []string{value}
	}
	return labels, prefixes
}

// buildChildren turns an explore page into the root's child rows.
func buildChildren(root *node, page contract.ExplorePage) {
	root.children = nil
	if isTreeFacet(root.facet) {
		buildTree(root, page.Buckets)
	} else {
		for _, b := range page.Buckets {
			root.children = append(root.children, &node{kind: nodeValue, facet: root.facet, label: b.Value,
				value: b.Value, count: b.Count, depth: 1, parent: root})
		}
	}
	setMax(root.children)
	if page.Missing > 0 {
		root.children = append(root.children, &node{kind: nodeMissing, facet: root.facet, label: "missing",
			count: page.Missing, depth: 1, parent: root})
	}
	if page.MoreBuckets > 0 {
		root.children = append(root.children, &node{kind: nodeMore, facet: root.facet,
			count: page.MoreBuckets, depth: 1, parent: root})
	}
}

func buildTree(root *node, buckets []contract.FacetBucket) {
	index := map[string]*node{}
	for _, b := range buckets {
		labels, prefixes := splitPath(root.facet, b.Value)
		parent := root
		for i := range labels {
			n, ok := index[prefixes[i]]
			if !ok {
				n = &node{kind: nodeValue, facet: root.facet, label: labels[i], value: prefixes[i],
					depth: parent.depth + 1, parent: parent}
				index[prefixes[i]] = n
				parent.children = append(parent.children, n)
			}
			n.count += b.Count
			parent = n
		}
	}
	var finish func(ns []*node)
	finish = func(ns []*node) {
		sort.SliceStable(ns, func(i, j int) bool {
			if ns[i].count != ns[j].count {
				return ns[i].count > ns[j].count
			}
			return ns[i].label < ns[j].label
		})
		setMax(ns)
		for _, n := range ns {
			if len(n.children) > 0 && n.facet == contract.FacetNamespace {
				n.subtree = true
			}
			finish(n.children)
		}
	}
	finish(root.children)
}

func setMax(ns []*node) {
	var m uint64
	for _, n := range ns {
		if n.kind == nodeValue && n.count > m {
			m = n.count
		}
	}
	for _, n := range ns {
		n.max = m
	}
}

// flatten lists the visible rows in display order.
func flatten(roots []*node) []*node {
	var out []*node
	var walk func(ns []*node)
	walk = func(ns []*node) {
		for _, n := range ns {
			out = append(out, n)
			if n.expanded {
				walk(n.children)
			}
		}
	}
	walk(roots)
	return out
}

func rootOf(n *node) *node {
	for n.parent != nil {
		n = n.parent
	}
	return n
}
