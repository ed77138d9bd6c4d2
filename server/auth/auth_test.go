package auth_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/server/audit"
	"mnemo/server/auth"
	"mnemo/server/wire"
)

func newKey(t *testing.T) (gossh.PublicKey, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k, strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k))) + " someone@laptop"
}

func TestParseKeysFindsPrincipalsByTokenAndKey(t *testing.T) {
	aliceKey, aliceLine := newKey(t)
	strangerKey, _ := newKey(t)
	text := fmt.Sprintf(`
[[principal]]
name = "alice"
role = "curator"
reach = { at = "team:acme", descendants = true, inherit = false }
ssh_keys = [%q]
token_sha256 = [%q]

[[principal]]
name = "bob"
role = "reader"
token_sha256 = [%q]
`, aliceLine, strings.ToUpper(auth.HashToken("alice-token")), auth.HashToken("bob-token"))
	keys, err := auth.ParseKeys([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := keys.ByToken("alice-token")
	if !ok || p.Name != "alice" || p.Role != auth.RoleCurator {
		t.Fatalf("alice's token found %+v", p)
	}
	want := contract.Reach{At: contract.MustNamespace("team:acme"), Descendants: true}
	if p.Reach == nil || !p.Reach.At.Equal(want.At) || p.Reach.Descendants != want.Descendants || p.Reach.Inherit {
		t.Fatalf("alice's reach is %+v", p.Reach)
	}
	if p, ok := keys.ByToken("bob-token"); !ok || p.Name != "bob" || p.Reach != nil || !p.ReadOnly() {
		t.Fatalf("bob: %+v", p)
	}
	if _, ok := keys.ByToken("alice-token "); ok {
		t.Fatal("a near-miss token was accepted")
	}
	if p, ok := keys.ByKey(aliceKey); !ok || p.Name != "alice" {
		t.Fatal("alice's ssh key was not found")
	}
	if _, ok := keys.ByKey(strangerKey); ok {
		t.Fatal("a stranger's key was accepted")
	}
}

func TestParseKeysRefusesBadFilesWithoutEchoingSecrets(t *testing.T) {
	_, line := newKey(t)
	hash := auth.HashToken("t")
	cases := []struct{ name, text, want string }{
		{"unknown role", `[[principal]]` + "\nname = \"a\"\nrole = \"root\"", "role must be reader, curator or admin"},
		{"no name", `[[principal]]` + "\nrole = \"reader\"", "principal 1 has no name"},
		{"twice", "[[principal]]\nname = \"a\"\nrole = \"reader\"\n[[principal]]\nname = \"a\"\nrole = \"reader\"", "named twice"},
		{"owner name", "[[principal]]\nname = \"owner\"\nrole = \"reader\"", "reserved name"},
		{"bad key", "[[principal]]\nname = \"a\"\nrole = \"reader\"\nssh_keys = [\"ssh-ed25519 AAAAnotakey\"]", "ssh key 1 is not in authorized_keys form"},
		{"short hash", "[[principal]]\nname = \"a\"\nrole = \"reader\"\ntoken_sha256 = [\"abc123\"]", "64 hex digits"},
		{"shared key", fmt.Sprintf("[[principal]]\nname = \"a\"\nrole = \"reader\"\nssh_keys = [%q]\n[[principal]]\nname = \"b\"\nrole = \"reader\"\nssh_keys = [%q]", line, line), "already belongs to `a`"},
		{"shared token", fmt.Sprintf("[[principal]]\nname = \"a\"\nrole = \"reader\"\ntoken_sha256 = [%q]\n[[principal]]\nname = \"b\"\nrole = \"reader\"\ntoken_sha256 = [%q]", hash, hash), "already belongs to `a`"},
		{"typo", "[[principal]]\nname = \"a\"\nrole = \"reader\"\ntokens = []", "unknown setting"},
		{"bad reach", "[[principal]]\nname = \"a\"\nrole = \"reader\"\nreach = { at = \"nope\" }", "reach"},
	}
	for _, c := range cases {
		_, err := auth.ParseKeys([]byte(c.text))
		if err == nil {
			t.Fatalf("%s: accepted", c.name)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) {
			t.Fatalf("%s: %q does not say %q", c.name, msg, c.want)
		}
		if strings.Contains(msg, hash) || strings.Contains(msg, "AAAAC3") {
			t.Fatalf("%s: the error echoes a secret: %q", c.name, msg)
		}
	}
}

func FuzzParseKeys(f *testing.F) {
	f.Add([]byte("[[principal]]\nname = \"a\"\nrole = \"reader\"\nreach = { at = \"team:acme\" }"))
	f.Add([]byte("[[principal]]\nname = \"\"\n"))
	f.Add([]byte("principal = 3"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := auth.ParseKeys(data)
		if err != nil {
			if contract.KindOf(err) != contract.KindConfig {
				t.Fatalf("a keys-file error of kind %s: %v", contract.KindOf(err), err)
			}
			return
		}
		for _, p := range keys.Principals() {
			if p.Name == "" || p.Name == auth.OwnerName {
				t.Fatalf("accepted principal name %q", p.Name)
			}
			if _, ok := auth.ParseRole(string(p.Role)); !ok {
				t.Fatalf("accepted role %q", p.Role)
			}
		}
	})
}

type memoryLog struct{ events []audit.Event }

func (l *memoryLog) AppendAudit(_ context.Context, ev audit.Event) error {
	l.events = append(l.events, ev)
	return nil
}

func doc(ns, text string) contract.StoreItem {
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	meta.Namespace = contract.MustNamespace(ns)
	return contract.Document(text, meta)
}

func TestConfineBindsReadsAndWritesToTheReach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := memory.New()
	in, _ := contract.Store(ctx, e, doc("team:acme/agent:a", "inside"))
	out, _ := contract.Store(ctx, e, doc("team:other", "outside"))
	sandbox, _ := contract.Store(ctx, e, doc("team:acme/service:billing", "sandboxed"))
	reach := contract.ReachSubtree(contract.MustNamespace("team:acme"))
	log := &memoryLog{}
	alice := auth.Confine(e, &auth.Principal{Name: "alice", Role: auth.RoleCurator, Reach: &reach}, auth.WithAudit(log), auth.WithVia("test"))

	sandboxReach := contract.ReachExact(contract.MustNamespace("team:acme/service:billing"))
	for _, r := range []*contract.Reach{nil, contract.Ptr(contract.ReachSubtree(contract.Root()))} {
		recs, err := alice.GetRecords(ctx, contract.GetRequest{IDs: []string{in.ID, out.ID, sandbox.ID}, Reach: r})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].ID != in.ID {
			t.Fatalf("get_records with reach %+v saw %d records", r, len(recs))
		}
	}
	// A sandbox is not below a subtree: the reaches share nothing.
	if _, err := alice.GetRecords(ctx, contract.GetRequest{IDs: []string{sandbox.ID}, Reach: &sandboxReach}); !wire.IsForbidden(err) {
		t.Fatalf("get_records in a sandbox outside the bound: %v", err)
	}
	rep, skipped, err := alice.ForgetCounted(ctx, contract.ForgetIDs(out.ID, in.ID, in.ID))
	if err != nil || rep.Forgotten != 1 || skipped != 1 {
		t.Fatalf("forget: %+v skipped %d, %v", rep, skipped, err)
	}
	if n := e.Len(); n != 2 {
		t.Fatalf("the store holds %d records, want 2", n)
	}
	_, err = contract.Store(ctx, alice, doc("team:other", "sneaky"))
	if !wire.IsForbidden(err) {
		t.Fatalf("store outside: %v", err)
	}
	_, err = contract.Erase(ctx, alice, contract.EraseRequest{Reach: reach})
	if !wire.IsForbidden(err) {
		t.Fatalf("curator erase: %v", err)
	}
	if len(log.events) != 4 || log.events[0].Op != "get_records" || log.events[0].Refused == "" ||
		log.events[1].Op != "forget" || log.events[1].Via != "test" ||
		log.events[2].Refused == "" || log.events[3].Op != "erase" {
		t.Fatalf("audit: %+v", log.events)
	}

	// No reach: everything but sandboxes. The owner: everything.
	bob := auth.Confine(e, &auth.Principal{Name: "bob", Role: auth.RoleReader})
	hits, _ := bob.Get(ctx, contract.GetRequest{IDs: []string{out.ID, sandbox.ID}})
	if len(hits) != 1 || hits[0].ID != out.ID {
		t.Fatalf("a principal without reach saw %v", hits)
	}
	if _, err := bob.Get(ctx, contract.GetRequest{IDs: []string{sandbox.ID}, Reach: &sandboxReach}); !wire.IsForbidden(err) {
		t.Fatalf("a principal without reach asked for a sandbox: %v", err)
	}
	owner := auth.Confine(e, auth.Owner())
	hits, _ = owner.Get(ctx, contract.GetRequest{IDs: []string{sandbox.ID}, Reach: &sandboxReach})
	if len(hits) != 1 {
		t.Fatal("the owner could not read a sandbox with its reach")
	}
}

func TestReplaceSwapsPrincipalsInPlace(t *testing.T) {
	one, err := auth.ParseKeys([]byte(fmt.Sprintf("[[principal]]\nname = \"a\"\nrole = \"reader\"\ntoken_sha256 = [%q]\n", auth.HashToken("old"))))
	if err != nil {
		t.Fatal(err)
	}
	two, err := auth.ParseKeys([]byte(fmt.Sprintf("[[principal]]\nname = \"b\"\nrole = \"admin\"\ntoken_sha256 = [%q]\n", auth.HashToken("new"))))
	if err != nil {
		t.Fatal(err)
	}
	one.Replace(two)
	if _, ok := one.ByToken("old"); ok {
		t.Fatal("a removed token still works")
	}
	if p, ok := one.ByToken("new"); !ok || p.Name != "b" {
		t.Fatal("the new file's token does not work")
	}
}

// TestKeysFileReachWithoutInheritDoesNotInherit is defect 5 of issue 12: a
// principal's reach written without inherit gets inherit false (least
// privilege), so it cannot read the root; a misspelt reach field is refused
// naming the principal and the field; Account says what each can do.
func TestKeysFileReachWithoutInheritDoesNotInherit(t *testing.T) {
	keys, err := auth.ParseKeys([]byte(`
[[principal]]
name = "gina"
role = "curator"
reach = { at = "team:gamma", descendants = true }
token_sha256 = ["` + auth.HashToken("gina") + `"]

[[principal]]
name = "ian"
role = "reader"
reach = { at = "team:gamma/agent:bot", inherit = true }
`))
	if err != nil {
		t.Fatal(err)
	}
	gina, ian := keys.Principals()[0], keys.Principals()[1]
	if gina.Reach.Inherit || !gina.Reach.Descendants || gina.Admits(contract.Root()) || !gina.Admits(contract.MustNamespace("team:gamma/agent:x")) {
		t.Fatalf("gina's reach %+v", gina.Reach)
	}
	if !ian.Reach.Inherit || !ian.Admits(contract.Root()) {
		t.Fatalf("an inherit written out is kept: %+v", ian.Reach)
	}
	ctx := context.Background()
	e := memory.New()
	gamma, _ := contract.Store(ctx, e, doc("team:gamma", "gamma"))
	_, _ = contract.Store(ctx, e, contract.Document("at the root", contract.MetaFromSource(contract.SourceAgent, nil)))
	hits, err := auth.Confine(e, gina).List(ctx, contract.ListRequest{Limit: 10})
	if err != nil || len(hits.Items) != 1 || hits.Items[0].ID != gamma.ID {
		t.Fatalf("gina lists %+v, %v", hits.Items, err)
	}
	if got, want := gina.Account(), "gina (curator; 1 token, 0 ssh keys): reads, stores, forgets and reviews in `team:gamma` with everything below it but service sandboxes"; got != want {
		t.Fatalf("account:\n%s\nwant\n%s", got, want)
	}
	if got, want := ian.Account(), "ian (reader; 0 tokens, 0 ssh keys): reads `team:gamma/agent:bot` with its ancestors; writes nothing"; got != want {
		t.Fatalf("account:\n%s\nwant\n%s", got, want)
	}

	_, err = auth.ParseKeys([]byte("[[principal]]\nname = \"gina\"\nrole = \"reader\"\nreach = { at = \"team:gamma\", descendents = true }\n"))
	if err == nil || !strings.Contains(err.Error(), "principal `gina`: reach has no field `descendents`") {
		t.Fatalf("a misspelt reach field: %v", err)
	}
}
