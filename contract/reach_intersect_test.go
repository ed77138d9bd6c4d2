package contract

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// reachFixture is every namespace of a small tree three levels deep, with
// teams, agents, users and service sandboxes at every level.
func reachFixture() []Namespace {
	segs := []Segment{{SegTeam, "acme"}, {SegTeam, "gamma"}, {SegAgent, "bot"}, {SegService, "job"}, {SegUser, "priya"}}
	out := []Namespace{Root()}
	level := []Namespace{Root()}
	for depth := 0; depth < 3; depth++ {
		var next []Namespace
		for _, n := range level {
			for _, s := range segs {
				c, err := n.Child(s)
				if err != nil {
					panic(err)
				}
				next = append(next, c)
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

func randomReach(rng *rand.Rand, nss []Namespace) Reach {
	r := Reach{At: nss[rng.IntN(len(nss))], Inherit: rng.IntN(2) == 0, Descendants: rng.IntN(2) == 0}
	if r.Inherit && rng.IntN(4) == 0 {
		r.Floor = rng.IntN(r.At.Depth() + 1)
	}
	return r
}

// TestIntersectAdmitsWhatBothAdmit: for random pairs of reaches (inherit,
// descendants, floors, sandboxes among the nodes), the intersection admits a
// namespace exactly when both reaches do, is false exactly when no namespace
// is common, survives the wire, and is the request itself when the request is
// within the bound.
func TestIntersectAdmitsWhatBothAdmit(t *testing.T) {
	nss := reachFixture()
	rng := rand.New(rand.NewPCG(12, 1))
	for i := 0; i < 4000; i++ {
		a, b := randomReach(rng, nss), randomReach(rng, nss)
		got, ok := a.Intersect(b)
		common := 0
		for _, n := range nss {
			both := a.Admits(n) && b.Admits(n)
			if both {
				common++
			}
			if ok && got.Admits(n) != both {
				t.Fatalf("%s ∩ %s = %s: admits %s = %v, both admit = %v", show(a), show(b), show(got), n, got.Admits(n), both)
			}
		}
		if ok != (common > 0) {
			t.Fatalf("%s ∩ %s: ok = %v with %d common namespaces", show(a), show(b), ok, common)
		}
		if !ok {
			continue
		}
		if !got.Within(a) || !got.Within(b) {
			t.Fatalf("%s ∩ %s = %s is not within both", show(a), show(b), show(got))
		}
		raw, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var back Reach
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		for _, n := range nss {
			if back.Admits(n) != got.Admits(n) {
				t.Fatalf("%s after the wire (%s) admits %s differently", show(got), raw, n)
			}
		}
	}
}

// TestIntersectExamples pins the cases serve mode meets most.
func TestIntersectExamples(t *testing.T) {
	acme := ReachSubtree(MustNamespace("team:acme"))
	cases := []struct {
		name      string
		req, with Reach
		want      string
		ok        bool
	}{
		{"within", ReachExact(MustNamespace("team:acme/agent:bot")), acme, `{"at":"team:acme/agent:bot","inherit":false,"descendants":false}`, true},
		{"agent reach under a subtree bound", ReachOf(MustNamespace("team:acme/agent:bot")), acme, `{"at":"team:acme/agent:bot","inherit":true,"descendants":false,"inherit_from":"team:acme"}`, true},
		{"wider", ReachSubtree(Root()), acme, `{"at":"team:acme","inherit":false,"descendants":true}`, true},
		{"disjoint", ReachSubtree(MustNamespace("team:gamma")), acme, ``, false},
		{"sandbox below a subtree", ReachExact(MustNamespace("team:acme/service:job")), acme, ``, false},
		{"siblings share ancestors", ReachOf(MustNamespace("team:acme/agent:a")), ReachOf(MustNamespace("team:acme/agent:b")), `{"at":"team:acme","inherit":true,"descendants":false}`, true},
	}
	for _, c := range cases {
		got, ok := c.req.Intersect(c.with)
		if ok != c.ok {
			t.Fatalf("%s: ok = %v", c.name, ok)
		}
		if !ok {
			continue
		}
		raw, _ := json.Marshal(got)
		if string(raw) != c.want {
			t.Fatalf("%s: %s, want %s", c.name, raw, c.want)
		}
	}
}

func TestInheritFromIsCheckedOnTheWire(t *testing.T) {
	for body, want := range map[string]string{
		`{"at":"team:acme/agent:bot","inherit":false,"inherit_from":"team:acme"}`: "reach inherit_from needs inherit",
		`{"at":"team:acme/agent:bot","inherit_from":"team:gamma"}`:                "reach inherit_from `team:gamma` is not `team:acme/agent:bot` or one of its ancestors",
	} {
		var r Reach
		err := json.Unmarshal([]byte(body), &r)
		if err == nil || err.Error() != want {
			t.Fatalf("%s: %v, want %q", body, err, want)
		}
	}
}

func show(r Reach) string {
	raw, _ := json.Marshal(r)
	return string(raw)
}
