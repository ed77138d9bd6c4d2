package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func wantInvalid(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want invalid request %q", msg)
	}
	if !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("error %v is not an invalid request", err)
	}
	if got := AsError(err).Message; got != msg {
		t.Fatalf("message\n got %q\nwant %q", got, msg)
	}
}

func TestItemValidateMessages(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		item StoreItem
		msg  string
	}{
		{Document("  \n", MemoryMeta{}), "document body must not be empty"},
		{StoreItem{Type: KindDocument, Body: DocumentBody{URI: "https://x", IsURI: true}}, "document body is an unresolved uri; resolve it through a source first"},
		{Conversation(nil, MemoryMeta{}), "conversation must have at least one turn"},
		{Conversation([]Turn{{Role: RoleUser, Text: "hi"}, {Role: RoleAssistant, Text: " "}}, MemoryMeta{}), "conversation turns must not be empty"},
		{Learning("\t", LearningFact, 0.5, MemoryMeta{}), "learning text must not be empty"},
		{Learning("x", LearningFact, 1.5, MemoryMeta{}), "learning confidence 1.5 is outside 0.0..=1.0"},
		{Learning("x", LearningFact, nan, MemoryMeta{}), "learning confidence NaN is outside 0.0..=1.0"},
		{Learning("x", LearningFact, -0.25, MemoryMeta{}), "learning confidence -0.25 is outside 0.0..=1.0"},
	}
	for _, c := range cases {
		wantInvalid(t, c.item.Validate(), c.msg)
	}
	for _, ok := range []StoreItem{
		Document("x", MemoryMeta{}), Learning("x", LearningOther, 0, MemoryMeta{}), Learning("x", LearningOther, 1, MemoryMeta{}),
		Conversation([]Turn{{Role: RoleTool, Text: "ran"}}, MemoryMeta{}),
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

func TestRenderText(t *testing.T) {
	title := "Plan"
	blank := "  "
	cases := []struct {
		item StoreItem
		want string
	}{
		{StoreItem{Type: KindDocument, Title: &title, Body: TextBody("body")}, "# Plan\n\nbody"},
		{StoreItem{Type: KindDocument, Title: &blank, Body: TextBody("body")}, "body"},
		{StoreItem{Type: KindDocument, Body: DocumentBody{URI: "https://u", IsURI: true}}, "https://u"},
		{Conversation([]Turn{{Role: RoleUser, Text: "hi"}, {Role: RoleAssistant, Text: "yo", ToolCalls: []ToolCallRef{{Name: "a", ID: Ptr("1")}, {Name: "b"}}}}, MemoryMeta{}), "user: hi\nassistant: yo [tools: a (1), b]"},
		{Learning("prefers tabs", LearningPreference, 0.8, MemoryMeta{}), "prefers tabs"},
	}
	for _, c := range cases {
		if got := c.item.RenderText(); got != c.want {
			t.Errorf("RenderText = %q, want %q", got, c.want)
		}
	}
}

func TestNamespaceParsing(t *testing.T) {
	nine := strings.TrimSuffix(strings.Repeat("agent:a/", 9), "/")
	cases := []struct{ in, msg string }{
		{"agent", "namespace segment `agent` must be written kind:id"},
		{"robot:x", "`robot` is not a namespace segment kind"},
		{"Agent:x", "`Agent` is not a namespace segment kind"},
		{"agent:", "namespace id `` must be 1 to 128 characters of A-Z, a-z, 0-9, `_` or `-`"},
		{"agent:a.b", "namespace id `a.b` must be 1 to 128 characters of A-Z, a-z, 0-9, `_` or `-`"},
		{"agent:a/", "namespace segment `` must be written kind:id"},
		{"agent:a//agent:b", "namespace segment `` must be written kind:id"},
		{"agent:a:b", "namespace id `a:b` must be 1 to 128 characters of A-Z, a-z, 0-9, `_` or `-`"},
		{nine, "a namespace nests at most 8 deep"},
		{"agent:" + strings.Repeat("x", 129), "namespace id `" + strings.Repeat("x", 129) + "` must be 1 to 128 characters of A-Z, a-z, 0-9, `_` or `-`"},
	}
	for _, c := range cases {
		_, err := ParseNamespace(c.in)
		wantInvalid(t, err, c.msg)
	}
	for in, want := range map[string]string{
		"": "root", "root": "root", "  root ": "root", "team:acme/agent:writer": "team:acme/agent:writer",
		" ws:main ": "ws:main", strings.TrimSuffix(strings.Repeat("agent:a/", 8), "/"): strings.TrimSuffix(strings.Repeat("agent:a/", 8), "/"),
		"agent:" + strings.Repeat("x", 128): "agent:" + strings.Repeat("x", 128),
	} {
		ns, err := ParseNamespace(in)
		if err != nil || ns.String() != want {
			t.Errorf("ParseNamespace(%q) = %v, %v; want %s", in, ns, err, want)
		}
	}
	deep := MustNamespace(strings.TrimSuffix(strings.Repeat("agent:a/", 8), "/"))
	if _, err := deep.Child(Segment{SegAgent, "b"}); err == nil {
		t.Error("a ninth segment must be refused")
	}
	if !MustNamespace("agent:researcher").IsWithin(Root()) || MustNamespace("agent:researchers").IsWithin(MustNamespace("agent:researcher")) {
		t.Error("IsWithin is a segment prefix")
	}
	if got := MustNamespace("team:acme/agent:w/agent:h").SharedAncestor().String(); got != "team:acme" {
		t.Errorf("shared ancestor %s", got)
	}
	var back Namespace
	if err := json.Unmarshal([]byte(`"robot:x"`), &back); err == nil || !strings.Contains(err.Error(), "`robot` is not a namespace segment kind") {
		t.Errorf("namespace JSON error: %v", err)
	}
}

func TestSanitizedSegment(t *testing.T) {
	cases := map[string]string{
		"o'neil@acme.com": "o-neil-acme-com-c5acae54",
		"":                "_",
		"_":               "_",
		"ok-id_1":         "ok-id_1",
	}
	for raw, want := range cases {
		if got := SanitizedSegment(SegAgent, raw).ID; got != want {
			t.Errorf("SanitizedSegment(%q) = %q, want %q", raw, got, want)
		}
	}
	long := SanitizedSegment(SegUser, strings.Repeat("é", 300)).ID
	if len(long) != 128 || !strings.HasPrefix(long, strings.Repeat("-", 119)+"-") {
		t.Errorf("long sanitised id %q (len %d)", long, len(long))
	}
	if _, err := NewSegment(SegUser, long); err != nil {
		t.Errorf("a sanitised id must be valid: %v", err)
	}
	if AgentNamespace("o'neil@acme.com").String() != "agent:o-neil-acme-com-c5acae54" {
		t.Error("AgentNamespace sanitises")
	}
}

func TestReachWorkedExample(t *testing.T) {
	R, T := Root(), MustNamespace("team:acme")
	W, H := MustNamespace("team:acme/agent:writer"), MustNamespace("team:acme/agent:writer/agent:helper")
	E := MustNamespace("team:acme/agent:editor")
	all := map[string]Namespace{"R": R, "T": T, "W": W, "H": H, "E": E}
	cases := []struct {
		name  string
		reach *Reach
		want  string
	}{
		{"of(W)", Ptr(ReachOf(W)), "RTW"},
		{"of(E)", Ptr(ReachOf(E)), "ERT"},
		{"exact(W)", Ptr(ReachExact(W)), "W"},
		{"of(H)", Ptr(ReachOf(H)), "HRTW"},
		{"subtree(W)", Ptr(ReachSubtree(W)), "HW"},
		{"subtree(T)", Ptr(ReachSubtree(T)), "EHTW"},
		{"T inherit+descendants", &Reach{At: T, Inherit: true, Descendants: true}, "EHRTW"},
		{"of(root)", Ptr(ReachOf(R)), "R"},
		{"subtree(root)", Ptr(ReachSubtree(R)), "EHRTW"},
		{"none", nil, "EHRTW"},
	}
	for _, c := range cases {
		var got []string
		for name, ns := range all {
			if AdmittedBy(c.reach, ns) {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if strings.Join(got, "") != c.want {
			t.Errorf("%s admits %v, want %s", c.name, got, c.want)
		}
	}
	if nodes := ReachOf(W).Nodes(); len(nodes) != 3 || !nodes[0].IsRoot() || !nodes[2].Equal(W) {
		t.Errorf("Nodes %v", nodes)
	}
	var def Reach
	if err := json.Unmarshal([]byte(`{"at":"agent:x"}`), &def); err != nil || !sameReach(def, ReachOf(MustNamespace("agent:x"))) {
		t.Errorf("reach defaults: %+v %v", def, err)
	}
	if b, _ := json.Marshal(ReachExact(Root())); string(b) != `{"at":"root","inherit":false,"descendants":false}` {
		t.Errorf("reach JSON %s", b)
	}
}

func TestServiceSandbox(t *testing.T) {
	main := MustNamespace("ws:main")
	flow := MustNamespace("ws:main/service:newsletter")
	inFlow := MustNamespace("ws:main/service:newsletter/agent:writer")
	sub := MustNamespace("ws:main/service:newsletter/service:sub")
	for _, c := range []struct {
		name  string
		reach *Reach
		ns    Namespace
		want  bool
	}{
		{"none skips the sandbox", nil, flow, false},
		{"none skips inside it", nil, inFlow, false},
		{"subtree(root)", Ptr(ReachSubtree(Root())), flow, false},
		{"subtree(ws:main)", Ptr(ReachSubtree(main)), inFlow, false},
		{"exact(flow)", Ptr(ReachExact(flow)), flow, true},
		{"subtree(flow) admits inside", Ptr(ReachSubtree(flow)), inFlow, true},
		{"subtree(flow) skips nested sandbox", Ptr(ReachSubtree(flow)), sub, false},
		{"of(inside) inherits flow", Ptr(ReachOf(inFlow)), flow, true},
		{"none admits ws:main", nil, main, true},
	} {
		if got := AdmittedBy(c.reach, c.ns); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestReachWithin(t *testing.T) {
	acme := MustNamespace("team:acme")
	writer := MustNamespace("team:acme/agent:writer")
	cases := []struct {
		name         string
		inner, outer Reach
		want         bool
	}{
		{"subtree within itself", ReachSubtree(acme), ReachSubtree(acme), true},
		{"subtree(writer) within subtree(acme)", ReachSubtree(writer), ReachSubtree(acme), true},
		{"exact(writer) within subtree(acme)", ReachExact(writer), ReachSubtree(acme), true},
		{"of(writer) within subtree(root)", ReachOf(writer), ReachSubtree(Root()), true},
		{"of(writer) not within subtree(acme)", ReachOf(writer), ReachSubtree(acme), false},
		{"exact(acme) within of(writer)", ReachExact(acme), ReachOf(writer), true},
		{"of(acme) within of(writer)", ReachOf(acme), ReachOf(writer), true},
		{"subtree(acme) not within of(writer)", ReachSubtree(acme), ReachOf(writer), false},
		{"subtree(writer) not within of(writer)", ReachSubtree(writer), ReachOf(writer), false},
		{"sandbox not within subtree(acme)", ReachExact(MustNamespace("team:acme/service:flows")), ReachSubtree(acme), false},
		{"sandbox not within subtree(root)", ReachExact(MustNamespace("service:flows")), ReachSubtree(Root()), false},
	}
	for _, c := range cases {
		if got := c.inner.Within(c.outer); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMetaFilterMatches(t *testing.T) {
	obs := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	meta := MemoryMeta{
		Folder: Ptr("/m/src/app"), FilePath: Ptr("/m/docs/guide.md"), ThreadID: Ptr(RedactedID("t-1")),
		AgentID: Ptr("agent-7"), Source: SourceRef{Kind: SourceFile, ID: Ptr("src-1")}, Tags: []string{"a", "b"},
		Turns: &TurnRange{First: 4, Last: 5}, ToolCall: &ToolCallRef{Name: "read_plan", ID: Ptr("c1")}, ObservedAt: &obs,
		Language: Ptr("go"),
	}
	bare := MemoryMeta{}
	d := func(y int) *time.Time { return Ptr(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)) }
	cases := []struct {
		name string
		f    MetaFilter
		kind ItemKind
		m    *MemoryMeta
		want bool
	}{
		{"empty", MetaFilter{}, KindDocument, &meta, true},
		{"folder prefix", MetaFilter{Folder: Ptr("/m/src")}, KindDocument, &meta, true},
		{"folder trailing slash", MetaFilter{Folder: Ptr("/m/src/")}, KindDocument, &meta, true},
		{"folder exact", MetaFilter{Folder: Ptr("/m/src/app")}, KindDocument, &meta, true},
		{"folder not on boundary", MetaFilter{Folder: Ptr("/m/sr")}, KindDocument, &meta, false},
		{"folder missing", MetaFilter{Folder: Ptr("/m")}, KindDocument, &bare, false},
		{"file_path prefix", MetaFilter{FilePath: Ptr("/m/docs")}, KindDocument, &meta, true},
		{"file_path bc", MetaFilter{FilePath: Ptr("/m/doc")}, KindDocument, &meta, false},
		{"redacted thread", MetaFilter{ThreadID: Ptr("t-1")}, KindConversation, &meta, true},
		{"redacted thread other", MetaFilter{ThreadID: Ptr("t-2")}, KindConversation, &meta, false},
		{"agent exact", MetaFilter{AgentID: Ptr("agent-7")}, KindDocument, &meta, true},
		{"source id", MetaFilter{SourceID: Ptr("src-1")}, KindDocument, &meta, true},
		{"source id missing", MetaFilter{SourceID: Ptr("src-1")}, KindDocument, &bare, false},
		{"sources", MetaFilter{Sources: []SourceKind{SourceRSS, SourceFile}}, KindDocument, &meta, true},
		{"sources default agent", MetaFilter{Sources: []SourceKind{SourceAgent}}, KindDocument, &bare, true},
		{"sources miss", MetaFilter{Sources: []SourceKind{SourceRSS}}, KindDocument, &meta, false},
		{"kinds", MetaFilter{Kinds: []ItemKind{KindLearning}}, KindDocument, &meta, false},
		{"kinds hit", MetaFilter{Kinds: []ItemKind{KindLearning, KindDocument}}, KindDocument, &meta, true},
		{"tags_any", MetaFilter{TagsAny: []string{"z", "b"}}, KindDocument, &meta, true},
		{"tags_any miss", MetaFilter{TagsAny: []string{"z"}}, KindDocument, &meta, false},
		{"turns", MetaFilter{Turns: &TurnRange{4, 5}}, KindConversation, &meta, true},
		{"turns differ", MetaFilter{Turns: &TurnRange{4, 6}}, KindConversation, &meta, false},
		{"tool_call", MetaFilter{ToolCall: Ptr("read_plan")}, KindDocument, &meta, true},
		{"tool_call other", MetaFilter{ToolCall: Ptr("c1")}, KindDocument, &meta, false},
		{"language", MetaFilter{Language: Ptr("go")}, KindDocument, &meta, true},
		{"language missing", MetaFilter{Language: Ptr("go")}, KindDocument, &bare, false},
		{"observed window", MetaFilter{ObservedAfter: d(2000), ObservedBefore: d(2002)}, KindDocument, &meta, true},
		{"observed after inclusive", MetaFilter{ObservedAfter: &obs}, KindDocument, &meta, true},
		{"observed before exclusive", MetaFilter{ObservedBefore: &obs}, KindDocument, &meta, false},
		{"observed without value", MetaFilter{ObservedAfter: d(1990)}, KindDocument, &bare, false},
		{"reach", MetaFilter{Reach: Ptr(ReachExact(MustNamespace("agent:x")))}, KindDocument, &meta, false},
	}
	for _, c := range cases {
		if got := c.f.Matches(c.kind, c.m); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := RedactedID("t-1"); got != "tm-redacted:46e9bc3476c92ea24fb17adac6cd9cda" {
		t.Errorf("RedactedID = %s", got)
	}
	if SameID(Ptr("tm-redacted:46e9bc3476c92ea24fb17adac6cd9cda"), "t-2") || !SameID(Ptr("t-1"), "t-1") || SameID(nil, "t-1") {
		t.Error("SameID")
	}
}

func TestMetaFilterIsEmpty(t *testing.T) {
	if !(MetaFilter{}).IsEmpty() || !(MetaFilter{Kinds: []ItemKind{}}).IsEmpty() {
		t.Error("the zero filter and kinds: [] are empty")
	}
	if (MetaFilter{Reach: Ptr(ReachOf(Root()))}).IsEmpty() || (MetaFilter{Statuses: []Status{StatusActive}}).IsEmpty() {
		t.Error("a reach alone (or a status) is not empty")
	}
	var f MetaFilter
	if err := json.Unmarshal([]byte(`{"kinds":[],"unknown":1}`), &f); err != nil || !f.IsEmpty() {
		t.Errorf("wire kinds: [] is empty: %v %+v", err, f)
	}
}

func TestFacetNarrow(t *testing.T) {
	base := MetaFilter{Workspace: Ptr("w"), TagsAny: []string{"x"}}
	for _, f := range Facets() {
		val := "value"
		switch f {
		case FacetKind:
			val = "learning"
		case FacetSource:
			val = "rss"
		case FacetNamespace:
			val = "team:acme"
		case FacetStatus:
			val = "candidate"
		}
		out, err := f.Narrow(base, val)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// Only the target field differs from the base.
		changed := 0
		a, _ := json.Marshal(base)
		b, _ := json.Marshal(out)
		var am, bm map[string]json.RawMessage
		_ = json.Unmarshal(a, &am)
		_ = json.Unmarshal(b, &bm)
		for k, v := range bm {
			if string(am[k]) != string(v) {
				changed++
			}
		}
		for k := range am {
			if _, ok := bm[k]; !ok {
				changed++
			}
		}
		if changed != 1 {
			t.Errorf("%s: narrowing changed %d fields: %s -> %s", f, changed, a, b)
		}
		if base.TagsAny[0] != "x" {
			t.Fatalf("%s: narrowing aliased the base filter", f)
		}
	}
	ns, _ := FacetNamespace.Narrow(MetaFilter{Reach: Ptr(ReachSubtree(Root()))}, "team:acme")
	if !sameReach(*ns.Reach, ReachExact(MustNamespace("team:acme"))) {
		t.Errorf("namespace narrow sets an exact reach: %+v", ns.Reach)
	}
	for _, c := range []struct {
		f    Facet
		v    string
		want string
	}{
		{FacetTag, "  ", "a `tag` value must not be blank"},
		{FacetKind, "memo", "`memo` is not an item kind"},
		{FacetSource, "mail", "`mail` is not a source kind"},
		{FacetNamespace, "robot:x", "`robot` is not a namespace segment kind"},
		{FacetStatus, "gone", "`gone` is not a status"},
	} {
		_, err := c.f.Narrow(MetaFilter{}, c.v)
		wantInvalid(t, err, c.want)
	}
}

func TestFacetValues(t *testing.T) {
	m := MemoryMeta{Tags: []string{"a", "b"}, ToolCall: &ToolCallRef{Name: "t"}, Namespace: MustNamespace("team:x")}
	if got := FacetTag.Values(KindDocument, &m, StatusActive); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("tag values %v", got)
	}
	if got := FacetNamespace.Values(KindDocument, &MemoryMeta{}, ""); !slices.Equal(got, []string{"root"}) {
		t.Errorf("root namespace value %v", got)
	}
	if got := FacetWorkspace.Values(KindDocument, &m, ""); len(got) != 0 {
		t.Errorf("missing workspace %v", got)
	}
	if got := FacetStatus.Values(KindDocument, &m, ""); !slices.Equal(got, []string{"active"}) {
		t.Errorf("status defaults to active: %v", got)
	}
}

func TestExplorePageOf(t *testing.T) {
	counts := map[string]uint64{"b": 3, "a": 3, "c": 5, "d": 1}
	p := ExplorePageOf(FacetTag, counts, 2, 9, 1, false)
	if len(p.Buckets) != 2 || p.Buckets[0] != (FacetBucket{"c", 5}) || p.Buckets[1] != (FacetBucket{"a", 3}) || p.MoreBuckets != 2 {
		t.Errorf("page %+v", p)
	}
	all := ExplorePageOf(FacetTag, counts, 10, 9, 1, false)
	if all.MoreBuckets != 0 || len(all.Buckets) != 4 || all.Buckets[2].Value != "b" {
		t.Errorf("page %+v", all)
	}
	b, _ := json.Marshal(ExplorePageOf(FacetKind, map[string]uint64{"B": 1, "a": 1}, 5, 2, 0, false))
	if string(b) != `{"facet":"kind","buckets":[{"value":"B","count":1},{"value":"a","count":1}],"total":2,"missing":0,"more_buckets":0,"truncated":false}` {
		t.Errorf("explore JSON %s", b)
	}
}

func TestRequestValidateMessages(t *testing.T) {
	zone := "Mars/Olympus"
	cases := []struct {
		err error
		msg string
	}{
		{RecallRequest{Question: " ", Limit: 1}.Validate(), "recall question must not be empty"},
		{RecallRequest{Question: "q", Limit: 0}.Validate(), "recall limit must be positive"},
		{RecallRequest{Question: "q", Limit: 1, RefersTo: &TimeHint{From: "2026-02-02", To: "2026-02-01"}}.Validate(), "time hint runs backwards: 2026-02-02 > 2026-02-01"},
		{TimeHint{From: "2026-02-01", To: "2026-02-01", Zone: &zone}.Validate(), `time hint zone "Mars/Olympus" is not an IANA zone`},
		{FetchRequest{Query: "", Mode: ModeKeyword, Limit: 1}.Validate(), "fetch query must not be empty"},
		{FetchRequest{Query: "q", Mode: ModeKeyword, Limit: 0}.Validate(), "fetch limit must be positive"},
		{FetchRequest{Query: "q", Mode: ModeKeyword, Limit: 1, MaxScopes: Ptr(0)}.Validate(), "fetch max_scopes must be positive"},
		{ListRequest{Limit: 0}.Validate(), "list limit must be positive"},
		{ExploreRequest{Facet: FacetKind, Limit: 0}.Validate(), "explore limit must be between 1 and 500"},
		{ExploreRequest{Facet: FacetKind, Limit: 501}.Validate(), "explore limit must be between 1 and 500"},
		{ExploreRequest{Facet: FacetKind, Limit: 1, ScanLimit: Ptr(50001)}.Validate(), "explore scan_limit must be between 1 and 50000"},
		{ExploreRequest{Facet: FacetKind, Limit: 1, ScanLimit: Ptr(0)}.Validate(), "explore scan_limit must be between 1 and 50000"},
		{GetRequest{}.Validate(), "get takes between 1 and 200 ids"},
		{GetRequest{IDs: make([]string, 201)}.Validate(), "get takes between 1 and 200 ids"},
		{GetRequest{IDs: []string{"a", " "}}.Validate(), "an id must not be blank"},
		{ForgetIDs().Validate(), "forget needs at least one id"},
		{ForgetFilter(MetaFilter{Kinds: []ItemKind{}}).Validate(), "forget refuses an empty filter, which would mean everything"},
		{EraseRequest{Reach: ReachSubtree(Root())}.Validate(), "erasing the whole tree needs whole_tree: true"},
		{ConsolidateRequest{Kinds: []ItemKind{KindLearning, KindLearning}}.Validate(), "consolidate names the kind `learning` twice"},
		{BeliefsRequest{Limit: 0}.Validate(), "a beliefs limit must be positive"},
		{BeliefsRequest{Limit: 1, Query: Ptr(" ")}.Validate(), "a beliefs query must not be blank"},
		{ValidateMany(nil), "store_many takes between 1 and 100 items"},
		{ValidateMany(make([]StoreItem, 101)), "store_many takes between 1 and 100 items"},
		{ValidateMany([]StoreItem{Document("x", MemoryMeta{}), Document("", MemoryMeta{})}), "document body must not be empty"},
		{(Descriptor{ID: "mnemo", FetchModes: []FetchMode{ModeKeyword}}).EnsureMode(ModeVector), "engine `mnemo` does not offer vector fetch"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if strings.HasPrefix(c.msg, "engine `") {
				if !errors.Is(c.err, ErrUnsupported) || AsError(c.err).Message != c.msg {
					t.Fatalf("got %v", c.err)
				}
				return
			}
			wantInvalid(t, c.err, c.msg)
		})
	}
	if _, err := ForgetWithinIDs([]string{"a", ""}); err == nil {
		t.Error("forget_within refuses blank ids")
	}
	if got, _ := ForgetWithinIDs([]string{"b", "a", "b"}); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("dedupe keeps first order: %v", got)
	}
	if err := (ForgetTarget{Filter: &MetaFilter{Reach: Ptr(ReachExact(Root()))}}).Validate(); err != nil {
		t.Errorf("a reach-only filter is a valid forget: %v", err)
	}
	if err := (EraseRequest{Reach: ReachSubtree(Root()), WholeTree: true}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestCanonicalEscaping(t *testing.T) {
	body := "a<>&\u2028\u2029\x01\x1f\x7f\b\t\n\f\ré\"\\日"
	it := Document(body, MemoryMeta{})
	want := `{"type":"document","body":{"text":"a<>&` + "\u2028\u2029" + `\u0001\u001f` + "\x7f" + `\b\t\n\f\ré\"\\日"},"meta":{"source":{"kind":"agent"}}}`
	if got := string(it.CanonicalJSON()); got != want {
		t.Errorf("canonical\n got %q\nwant %q", got, want)
	}
	var back StoreItem
	if err := json.Unmarshal(it.CanonicalJSON(), &back); err != nil || back.Body.Text != body {
		t.Errorf("round trip of escapes: %v %q", err, back.Body.Text)
	}
}

func TestTurnAtFractions(t *testing.T) {
	base := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
	cases := []struct {
		ns   int
		want string
	}{
		{0, "2025-05-06T07:08:09Z"},
		{123_000_000, "2025-05-06T07:08:09.123Z"},
		{120_000_000, "2025-05-06T07:08:09.120Z"},
		{123_456_000, "2025-05-06T07:08:09.123456Z"},
		{1_000, "2025-05-06T07:08:09.000001Z"},
		{123_456_789, "2025-05-06T07:08:09.123456789Z"},
		{1, "2025-05-06T07:08:09.000000001Z"},
	}
	for _, c := range cases {
		at := base.Add(time.Duration(c.ns))
		b, _ := json.Marshal(Turn{Role: RoleUser, Text: "hi", At: &at})
		want := `{"role":"user","text":"hi","at":"` + c.want + `"}`
		if string(b) != want {
			t.Errorf("turn %s, want %s", b, want)
		}
		var back Turn
		if err := json.Unmarshal(b, &back); err != nil || !back.At.Equal(at) {
			t.Errorf("turn round trip: %v %v", err, back.At)
		}
	}
	var zoned Turn
	if err := json.Unmarshal([]byte(`{"role":"user","text":"x","at":"2025-05-06T09:08:09+02:00"}`), &zoned); err != nil || FormatTime(*zoned.At) != "2025-05-06T07:08:09Z" {
		t.Errorf("offset times convert to UTC: %v %v", err, zoned.At)
	}
	if err := json.Unmarshal([]byte(`{"role":"robot","text":"x"}`), &zoned); err == nil {
		t.Error("unknown roles are refused")
	}
}

func TestStoreItemJSON(t *testing.T) {
	in := `{"meta":{"zzz":[1],"observed_at":"2026-01-02T03:04:05.5Z","observed_actor":{"name":"Priya","id":"user:priya"},"derive":false,"tags":["t"],"source":{"id":"s","kind":"file"},"tool_call":{"id":"c","name":"n"},"agent_id":"a","turns":{"last":2,"first":1},"thread_id":"th","url":"u","commit":"c0","repo":"o/r","language":"go","file_path":"/f","folder":"/d","workspace":"w","namespace":"team:acme"},"mime":"text/markdown","body":{"text":"b"},"title":"T","type":"document","extra":{"nested":true}}`
	var it StoreItem
	if err := json.Unmarshal([]byte(in), &it); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(it)
	want := `{"type":"document","title":"T","body":{"text":"b"},"mime":"text/markdown","meta":{"namespace":"team:acme","workspace":"w","folder":"/d","file_path":"/f","language":"go","repo":"o/r","commit":"c0","url":"u","thread_id":"th","turns":{"first":1,"last":2},"agent_id":"a","tool_call":{"name":"n","id":"c"},"source":{"kind":"file","id":"s"},"tags":["t"],"observed_at":"2026-01-02T03:04:05.500Z","derive":false,"observed_actor":{"id":"user:priya","name":"Priya"}}}`
	if string(out) != want {
		t.Errorf("wire form\n got %s\nwant %s", out, want)
	}
	if strings.Contains(string(it.CanonicalJSON()), "observed") {
		t.Error("the canonical form clears observed_at and observed_actor")
	}
	var back StoreItem
	if err := json.Unmarshal(out, &back); err != nil || back.Fingerprint() != it.Fingerprint() {
		t.Errorf("round trip changed the item: %v", err)
	}
	for _, bad := range []string{
		`{"body":{"text":"x"}}`, `{"type":"memo"}`, `{"type":"document"}`, `{"type":"document","body":{"text":"a","uri":"b"}}`,
		`{"type":"learning","text":"x","kind":"hunch","confidence":0.5}`, `{"type":"learning","text":"x","kind":"fact"}`,
		`{"type":"document","body":{"text":"x"},"meta":{"namespace":"robot:x"}}`, `{"type":"document","body":{"text":"x"},"meta":{"source":{"kind":"mail"}}}`,
	} {
		if err := json.Unmarshal([]byte(bad), &it); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	var uri StoreItem
	if err := json.Unmarshal([]byte(`{"type":"document","body":{"uri":"https://x"}}`), &uri); err != nil || !uri.Body.IsURI {
		t.Errorf("uri body: %v", err)
	}
	if b, _ := json.Marshal(uri); string(b) != `{"type":"document","body":{"uri":"https://x"},"meta":{"source":{"kind":"agent"}}}` {
		t.Errorf("uri wire %s", b)
	}
}

func TestForgetTargetShapes(t *testing.T) {
	for _, c := range []struct {
		t    ForgetTarget
		want string
	}{
		{ForgetIDs("a", "b"), `{"ids":["a","b"]}`},
		{ForgetIDs(), `{"ids":[]}`},
		{ForgetFilter(MetaFilter{Workspace: Ptr("w")}), `{"filter":{"workspace":"w"}}`},
	} {
		b, _ := json.Marshal(c.t)
		if string(b) != c.want {
			t.Errorf("forget target %s, want %s", b, c.want)
		}
		var back ForgetTarget
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
	var ft ForgetTarget
	for _, bad := range []string{`{}`, `{"ids":["a"],"filter":{}}`} {
		if err := json.Unmarshal([]byte(bad), &ft); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestDescriptorAndHealthJSON(t *testing.T) {
	b, _ := json.Marshal(Descriptor{ID: "mnemo", Label: "mnemo (bbolt + Bleve)", FetchModes: []FetchMode{ModeKeyword}, Consolidation: ConsolidationNone})
	if want := `{"id":"mnemo","label":"mnemo (bbolt + Bleve)","description":"","hosted":false,"needs_endpoint":false,"needs_key":false,"default_endpoint":null,"fetch_modes":["keyword"],"consolidation":"none"}`; string(b) != want {
		t.Errorf("descriptor %s", b)
	}
	for h, want := range map[Health]string{
		{State: HealthOK}:                          `{"state":"ok"}`,
		{State: HealthDegraded, Reason: "slow"}:    `{"state":"degraded","reason":"slow"}`,
		{State: HealthDown, Reason: "disk closed"}: `{"state":"down","reason":"disk closed"}`,
	} {
		b, _ := json.Marshal(h)
		if string(b) != want {
			t.Errorf("health %s, want %s", b, want)
		}
		var back Health
		if err := json.Unmarshal(b, &back); err != nil || back != h {
			t.Errorf("health round trip %+v", back)
		}
		if h.IsServing() != (h.State != HealthDown) {
			t.Errorf("IsServing(%v)", h)
		}
	}
}

func TestRecordJSON(t *testing.T) {
	r := RecordOf("id1", Ptr(Learning("x", LearningFact, 0.8, MemoryMeta{})), "",
		time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Ptr(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)), Ptr("id2"))
	b, _ := json.Marshal(r)
	want := `{"id":"id1","kind":"learning","text":"x","meta":{"source":{"kind":"agent"}},"confidence":0.8,"status":"active","created_at":"2026-01-02T03:04:05.123Z","updated_at":"2026-01-02T03:04:06.000Z","expires_at":"2027-01-01T00:00:00.000Z","superseded_by":"id2"}`
	if string(b) != want {
		t.Errorf("record\n got %s\nwant %s", b, want)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b2) != want {
		t.Errorf("record round trip %s", b2)
	}
	doc := RecordOf("d", Ptr(Document("y", MemoryMeta{})), StatusCandidate, time.Unix(0, 0), time.Unix(0, 0), nil, nil)
	if b, _ := json.Marshal(doc); strings.Contains(string(b), "confidence") || strings.Contains(string(b), "expires_at") {
		t.Errorf("optional record fields are omitted: %s", b)
	}
}

func TestErrorsIsByKindAndCode(t *testing.T) {
	q := QueryErr("limit must be at most %d", 1000)
	c := CursorErr("cursor is not decodable")
	if !errors.Is(q, ErrInvalidRequest) || !errors.Is(c, ErrInvalidRequest) {
		t.Error("browse errors are invalid requests")
	}
	if !errors.Is(q, &Error{Kind: KindInvalidRequest, Code: CodeInvalidQuery}) || errors.Is(q, &Error{Kind: KindInvalidRequest, Code: CodeContinuationInvalid}) {
		t.Error("codes distinguish browse errors")
	}
	if errors.Is(NotFound("x"), ErrInvalidRequest) || !errors.Is(fmt.Errorf("wrapped: %w", NotFound("x")), ErrNotFound) {
		t.Error("kinds distinguish errors through wrapping")
	}
	if q.Error() != "invalid request: limit must be at most 1000" || Conflict("x").Error() != "conflict: x" {
		t.Errorf("display %q", q.Error())
	}
	if KindOf(errors.New("boom")) != KindEngine || AsError(errors.New("boom")).Message != "boom" {
		t.Error("foreign errors are engine errors")
	}
	for _, k := range []ErrorKind{KindUnsupported, KindInvalidRequest, KindUnauthorized, KindNotFound, KindConflict, KindUnavailable, KindEngine, KindConfig} {
		if back, ok := ErrorKindFromWire(k.Wire()); !ok || back != k {
			t.Errorf("wire kind %s", k)
		}
	}
}

func TestInRequestOrder(t *testing.T) {
	found := map[string]Hit{"a": {ID: "a"}, "c": {ID: "c"}}
	got := InRequestOrder([]string{"c", "missing", "a", "c"}, found)
	if len(got) != 2 || got[0].ID != "c" || got[1].ID != "a" {
		t.Errorf("InRequestOrder %v", got)
	}
}

func sameReach(a, b Reach) bool {
	return a.At.Equal(b.At) && a.Inherit == b.Inherit && a.Descendants == b.Descendants
}

func TestParseTimeRefusesUnprintableYears(t *testing.T) {
	for _, s := range []string{"0000-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"} {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%s) accepted an instant outside years 0000..9999 in UTC", s)
		}
	}
	for _, s := range []string{"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "0001-01-01T00:30:00+00:30"} {
		if _, err := ParseTime(s); err != nil {
			t.Errorf("ParseTime(%s): %v", s, err)
		}
	}
}
