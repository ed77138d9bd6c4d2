package ingest

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
)

// LangGraph reads a LangGraph store straight from PostgreSQL (a postgres://
// URL): table store(prefix, key, value jsonb, created_at, updated_at,
// expires_at, ttl_minutes), one record per row. The prefix is the namespace
// tuple joined with "."; LangMem values ({"kind": "Memory", "content":
// {"content": ...}} or {"content": ...}) are learnings, any other value a
// document of its JSON.
type LangGraph struct{}

// Name implements Source.
func (LangGraph) Name() string { return "langgraph" }

// Describe implements Source.
func (LangGraph) Describe() string {
	return "LangGraph store in PostgreSQL: a postgres:// URL (search_path names another schema); one record per row"
}

// Sniff implements Source.
func (LangGraph) Sniff(path string) bool {
	return strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://")
}

// Read implements Source.
func (LangGraph) Read(ctx context.Context, url string, sink Sink) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return contract.Unavailable("cannot reach the LangGraph database: %v", err)
	}
	defer conn.Close(context.Background())
	var hasExpiry bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_name = 'store' AND column_name = 'expires_at' AND table_schema = ANY (current_schemas(false)))`).Scan(&hasExpiry); err != nil {
		return contract.Invalid("cannot read the LangGraph store: %v", err)
	}
	expiry := "NULL::timestamptz"
	if hasExpiry {
		expiry = "expires_at"
	}
	rows, err := conn.Query(ctx, `SELECT prefix, key, value::text, created_at, updated_at, `+expiry+` FROM store ORDER BY prefix, key`)
	if err != nil {
		return contract.Invalid("cannot read the LangGraph store (table store(prefix, key, value, ...)): %v", err)
	}
	defer rows.Close()
	now := time.Now()
	for rows.Next() {
		var prefix, key, value string
		var created, updated, expires *time.Time
		if err := rows.Scan(&prefix, &key, &value, &created, &updated, &expires); err != nil {
			return contract.Invalid("cannot read the LangGraph store: %v", err)
		}
		where := "store#" + prefix + "/" + key
		if expires != nil && !expires.After(now) {
			sink.Omit("expired row")
			continue
		}
		rec, err := langgraphRecord(prefix, key, []byte(value))
		if err != nil {
			sink.Skip(Skip{Location: where, Reason: err.Error()})
			continue
		}
		rec.Location = where
		obs := updated
		if obs == nil {
			obs = created
		}
		if obs != nil {
			t := obs.UTC()
			rec.Item.Meta.ObservedAt = &t
		}
		if expires != nil {
			t := expires.UTC()
			rec.ExpiresAt = &t
		}
		if err := sink.Record(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return contract.Invalid("cannot read the LangGraph store: %v", err)
	}
	return nil
}

// langgraphRecord maps one row's value to an item.
func langgraphRecord(prefix, key string, value []byte) (Record, error) {
	parts := strings.Split(prefix, ".")
	if len(parts)+1 > contract.MaxDepth {
		return Record{}, errf("namespace tuple %q has %d parts; at most %d fit under source:langgraph", prefix, len(parts), contract.MaxDepth-1)
	}
	pairs := []string{"source", "langgraph"}
	for _, p := range parts {
		pairs = append(pairs, "ws", p)
	}
	meta := contract.MemoryMeta{Namespace: ns(pairs...), Tags: []string{"langgraph"}}
	var v struct {
		Kind    string          `json:"kind"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return Record{}, errf("value is not a JSON object: %v", err)
	}
	var text string
	if json.Unmarshal(v.Content, &text) != nil {
		var inner struct {
			Content *string `json:"content"`
		}
		if json.Unmarshal(v.Content, &inner) == nil && inner.Content != nil {
			text = *inner.Content
		}
	}
	if v.Kind != "" {
		meta.Tags = append(meta.Tags, "kind:"+v.Kind)
	}
	if strings.TrimSpace(text) != "" && (v.Kind == "" || v.Kind == "Memory") {
		return Record{Item: contract.Learning(text, contract.LearningFact, 1, meta)}, nil
	}
	var pretty map[string]any
	_ = json.Unmarshal(value, &pretty)
	body, _ := json.MarshalIndent(pretty, "", "  ")
	doc := contract.Document(string(body), meta)
	title := key
	if v.Kind != "" {
		title = v.Kind + " " + key
	}
	doc.Title = contract.Ptr(title)
	doc.Mime = contract.Ptr("application/json")
	return Record{Item: doc}, nil
}
