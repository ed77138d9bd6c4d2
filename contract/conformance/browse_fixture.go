package conformance

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"mnemo/contract"
)

// browseFixture is six records with known values for every browse field: three
// learnings with exactly representable confidences, two documents and a
// conversation without one, three observed_at values around a day boundary, two
// candidates, namespaces at the root, under a node, and at a node whose name
// extends that node's (so `within` must respect segment boundaries).
type browseFixture struct {
	tag     string
	ids     map[string]string // label -> id
	labels  map[string]string // id -> label
	records map[string]contract.Record
	bx      contract.Namespace
	texts   map[string]string
}

// fixtureLabels is the fixture in store order.
var fixtureLabels = [...]string{"L1", "L2", "L3", "D4", "C5", "D6"}

func (r *run) fixture() (*browseFixture, error) {
	if r.browse != nil {
		return r.browse, nil
	}
	m := r.marker
	tag := m + "-browse"
	bx := r.ns("agent:" + m + "-bx")
	bxChild := r.ns("agent:" + m + "-bx/agent:child")
	bxy := r.ns("agent:" + m + "-bxy")
	meta := func(ns contract.Namespace, observed string) contract.MemoryMeta {
		mm := r.taggedMeta(tag)
		mm.Namespace = ns
		if observed != "" {
			t, _ := time.Parse(time.RFC3339Nano, observed)
			mm.ObservedAt = &t
		}
		return mm
	}
	items := map[string]contract.StoreItem{
		"L1": contract.Learning(m+" Alpha prefers tabs", contract.LearningPreference, 0.75, meta(bx, "2024-03-05T10:00:00Z")),
		"L2": contract.Learning(m+" beta Émile likes ЖУК", contract.LearningFact, 0.25, meta(contract.Root(), "")),
		"L3": contract.Learning(m+" gamma 50% literal_under", contract.LearningFact, 0.5, meta(bxChild, "2024-03-06T00:00:00Z")),
		"D4": contract.Document(m+" delta document body", meta(bxy, "2024-03-04T23:59:59.999Z")),
		"C5": contract.Conversation([]contract.Turn{
			{Role: contract.RoleUser, Text: m + " epsilon question"},
			{Role: contract.RoleAssistant, Text: "epsilon answer"},
		}, meta(contract.Root(), "")),
		"D6": contract.Document(m+" zeta plain", meta(contract.Root(), "")),
	}
	candidates := map[string]bool{"L2": true, "C5": true}
	fx := &browseFixture{tag: tag, ids: map[string]string{}, labels: map[string]string{},
		records: map[string]contract.Record{}, bx: bx, texts: map[string]string{}}
	var ids []string
	for _, label := range fixtureLabels {
		opts := contract.WriteOptions{}
		if candidates[label] {
			opts.Status = contract.StatusCandidate
		}
		rec, err := r.storeWith(items[label], opts)
		if err != nil {
			return nil, err
		}
		fx.ids[label] = rec.ID
		fx.labels[rec.ID] = label
		fx.texts[label] = items[label].RenderText()
		ids = append(ids, rec.ID)
	}
	recs, err := r.getRecords(ids, nil)
	if err != nil {
		return nil, err
	}
	if len(recs) != len(ids) {
		return nil, fail("get_records of the %d browse fixture records answered %d", len(ids), len(recs))
	}
	for _, rec := range recs {
		want := contract.StatusActive
		if candidates[fx.labels[rec.ID]] {
			want = contract.StatusCandidate
		}
		if rec.Status != want {
			return nil, fail("the fixture record %s was stored as %s but reads back as %s", fx.labels[rec.ID], want, rec.Status)
		}
		fx.records[rec.ID] = rec
	}
	r.browse = fx
	return fx, nil
}

// query is a browse over the fixture only.
func (fx *browseFixture) query(r *run) contract.BrowseQuery {
	return contract.BrowseQuery{Filter: r.tagFilter(fx.tag), Limit: contract.BrowseMaxLimit}
}

func (fx *browseFixture) idsOf(labels ...string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = fx.ids[l]
	}
	return out
}

// labelled prints ids as fixture labels where it can.
func (fx *browseFixture) labelled(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		if l, ok := fx.labels[id]; ok {
			out[i] = l
		} else {
			out[i] = id
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}

// where lists the fixture labels whose record satisfies keep, in fixture order.
func (fx *browseFixture) where(keep func(contract.Record) bool) []string {
	var out []string
	for _, l := range fixtureLabels {
		if keep(fx.records[fx.ids[l]]) {
			out = append(out, l)
		}
	}
	return out
}

// The suite's own ordering, written independently of the contract package so a
// mistake there cannot hide behind an agreeing oracle.

type orderVal struct {
	present bool
	num     float64
	text    string
}

func fieldVal(field string, rec *contract.Record) orderVal {
	switch field {
	case "updated_at":
		return orderVal{present: true, num: float64(rec.UpdatedAt.UnixMilli())}
	case "created_at":
		return orderVal{present: true, num: float64(rec.CreatedAt.UnixMilli())}
	case "observed_at":
		if rec.Meta.ObservedAt == nil {
			return orderVal{}
		}
		return orderVal{present: true, num: float64(rec.Meta.ObservedAt.UnixMilli())}
	case "confidence":
		if rec.Confidence == nil {
			return orderVal{}
		}
		return orderVal{present: true, num: float64(*rec.Confidence)}
	case "namespace":
		return orderVal{present: true, text: rec.Meta.Namespace.String()}
	case "kind":
		return orderVal{present: true, text: string(rec.Kind)}
	case "status":
		return orderVal{present: true, text: string(rec.Status)}
	}
	return orderVal{}
}

func expectedOrder(order []contract.SortKey, recs []contract.Record) []string {
	sorted := slices.Clone(recs)
	slices.SortStableFunc(sorted, func(a, b contract.Record) int {
		for _, k := range order {
			va, vb := fieldVal(k.Field, &a), fieldVal(k.Field, &b)
			switch {
			case !va.present && !vb.present:
				continue
			case !va.present:
				return 1
			case !vb.present:
				return -1
			}
			c := cmp.Compare(va.num, vb.num)
			if c == 0 {
				c = strings.Compare(va.text, vb.text)
			}
			if k.Dir == "desc" {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return strings.Compare(a.ID, b.ID)
	})
	return recordIDs(sorted)
}
