package ingest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
)

// langgraphStore loads testdata/langgraph/store.sql into a fresh schema of
// the test database and returns a URL whose search_path names it.
func langgraphStore(t *testing.T) string {
	t.Helper()
	base := os.Getenv("MNEMO_TEST_POSTGRES")
	if base == "" {
		t.Skip("MNEMO_TEST_POSTGRES is not set")
	}
	ddl, err := os.ReadFile("testdata/langgraph/store.sql")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("lg_test_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; SET search_path TO "+schema+";\n"+string(ddl)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

func TestLangGraphStoreRows(t *testing.T) {
	url := langgraphStore(t)
	c := read(t, LangGraph{}, url, "")
	got := map[string]stored{}
	for _, s := range c.stored {
		got[s.location] = s
	}
	short := got["store#memories.user-123/a1f0"]
	if short.item.Type != contract.KindLearning || short.item.Text != "Prefers short answers" ||
		short.item.Meta.Namespace.String() != "source:langgraph/ws:memories/ws:user-123" || short.expires != nil ||
		short.item.Meta.ObservedAt == nil || contract.FormatTime(*short.item.Meta.ObservedAt) != "2025-06-02T10:00:00Z" {
		t.Errorf("LangMem memory %+v", short)
	}
	night := got["store#memories.user-123/b2e1"]
	if night.item.Text != "Works night shifts" || night.expires == nil || contract.FormatTime(*night.expires) != "2999-01-01T00:00:00Z" {
		t.Errorf("row with expiry %+v", night)
	}
	profile := got["store#profiles.user-123/profile"]
	if profile.item.Type != contract.KindDocument || contract.Deref(profile.item.Title) != "UserProfile profile" ||
		!strings.Contains(profile.item.Body.Text, `"timezone": "Europe/Lisbon"`) {
		t.Errorf("profile %+v", profile.item)
	}
	if len(c.stored) != 3 || c.omitted["expired row"] != 1 {
		t.Errorf("records %v, omitted %v", keys(got), c.omitted)
	}
	if len(c.skipped) != 1 || c.skipped[0].Location != "store#a.b.c.d.e.f.g.h/deep" {
		t.Errorf("skipped %+v", c.skipped)
	}
	if src, err := Detect(url); err != nil || src.Name() != "langgraph" {
		t.Errorf("detect: %v %v", src, err)
	}
}
