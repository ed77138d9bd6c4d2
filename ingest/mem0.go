package ingest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"mnemo/contract"

	_ "modernc.org/sqlite" // mem0's history.db, without cgo
)

// Mem0 reads mem0's memories: the platform API's JSON pages
// ({count, next, previous, results: [...]}, a bare list, or a folder of
// pages) and the open-source library's SQLite history (~/.mem0/history.db),
// where the latest text of each memory that is not deleted is imported and
// its earlier texts are stored superseded by it.
type Mem0 struct{}

// Name implements Source.
func (Mem0) Name() string { return "mem0" }

// Describe implements Source.
func (Mem0) Describe() string {
	return "mem0: API JSON pages (a file or a folder of them) or the OSS history.db; memories as learnings"
}

var sqliteHeader = []byte("SQLite format 3\x00")

// Sniff implements Source.
func (Mem0) Sniff(path string) bool {
	if isDir(path) {
		matches, _ := filepath.Glob(filepath.Join(path, "*.json"))
		return len(matches) > 0 && mem0JSON(head(matches[0], 64<<10))
	}
	h := head(path, 64<<10)
	return bytes.HasPrefix(h, sqliteHeader) || mem0JSON(h)
}

func mem0JSON(h []byte) bool {
	return bytes.Contains(h, []byte(`"memory"`)) && (bytes.Contains(h, []byte(`"results"`)) || bytes.Contains(h, []byte(`"user_id"`)))
}

// Read implements Source.
func (Mem0) Read(ctx context.Context, path string, sink Sink) error {
	if isDir(path) {
		return walkFiles(ctx, path, sink, func(string) bool { return false }, func(p string) error {
			if !strings.HasSuffix(p, ".json") {
				return nil
			}
			return mem0Page(path, p, sink)
		})
	}
	if bytes.HasPrefix(head(path, len(sqliteHeader)), sqliteHeader) {
		return mem0History(ctx, path, sink)
	}
	return mem0Page(filepath.Dir(path), path, sink)
}

type mem0Memory struct {
	ID             string          `json:"id"`
	Memory         string          `json:"memory"`
	UserID         string          `json:"user_id"`
	AgentID        string          `json:"agent_id"`
	AppID          string          `json:"app_id"`
	RunID          string          `json:"run_id"`
	Categories     []string        `json:"categories"`
	CreatedAt      string          `json:"created_at"`
	UpdatedAt      string          `json:"updated_at"`
	ExpirationDate *string         `json:"expiration_date"`
	Metadata       json.RawMessage `json:"metadata"`
}

func mem0Page(root, path string, sink Sink) error {
	name := rel(root, path)
	data, err := readFile(path)
	if err != nil {
		sink.Skip(Skip{Location: name, Reason: contract.AsError(err).Message})
		return nil
	}
	var raw []json.RawMessage
	var page struct {
		Results []json.RawMessage `json:"results"`
	}
	t := bytes.TrimSpace(data)
	switch {
	case len(t) > 0 && t[0] == '[':
		err = json.Unmarshal(t, &raw)
	default:
		err = json.Unmarshal(t, &page)
		raw = page.Results
	}
	if err != nil {
		sink.Skip(Skip{Location: name, Reason: "not a mem0 page ({results: [...]}) or list: " + err.Error()})
		return nil
	}
	for i, r := range raw {
		where := fmt.Sprintf("%s$.results[%d]", name, i)
		var m mem0Memory
		if err := json.Unmarshal(r, &m); err != nil {
			sink.Skip(Skip{Location: where, Reason: "not a memory: " + err.Error()})
			continue
		}
		if m.ID != "" {
			where = name + "#" + m.ID
		}
		if strings.TrimSpace(m.Memory) == "" {
			sink.Skip(Skip{Location: where, Reason: "memory has no text"})
			continue
		}
		meta := contract.MemoryMeta{Namespace: mem0Namespace(m.AppID, m.UserID, m.AgentID),
			Tags: uniq(append([]string{"mem0"}, m.Categories...))}
		if m.RunID != "" {
			meta.ThreadID = contract.Ptr(m.RunID)
		}
		if m.AgentID != "" {
			meta.AgentID = contract.Ptr(m.AgentID)
		}
		meta.ObservedAt = parseTime(m.UpdatedAt)
		if meta.ObservedAt == nil {
			meta.ObservedAt = parseTime(m.CreatedAt)
		}
		rec := Record{Item: contract.Learning(m.Memory, contract.LearningFact, 1, meta), Location: where}
		if m.ExpirationDate != nil && *m.ExpirationDate != "" {
			exp := parseTime(*m.ExpirationDate)
			if exp == nil {
				if d, err := time.Parse("2006-01-02", *m.ExpirationDate); err == nil {
					exp = &d
				}
			}
			if exp == nil {
				sink.Skip(Skip{Location: where, Reason: fmt.Sprintf("expiration_date %q is not a date", *m.ExpirationDate)})
				continue
			}
			if !exp.After(time.Now()) {
				sink.Omit("expired memory")
				continue
			}
			rec.ExpiresAt = exp
		}
		if err := sink.Record(rec); err != nil {
			return err
		}
	}
	return nil
}

func mem0Namespace(app, user, agent string) contract.Namespace {
	if app == "" && user == "" && agent == "" {
		return ns("source", "mem0")
	}
	return ns("ws", app, "user", user, "agent", agent) // not service: that is a sandbox reads leave out
}

// mem0Row is one row of history.
type mem0Row struct {
	id, memoryID, newMemory, event, createdAt, actor string
	deleted                                          bool
}

func mem0History(ctx context.Context, path string, sink Sink) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return contract.Invalid("cannot open %s: %v", path, err)
	}
	defer db.Close()
	name := filepath.Base(path)
	cols := map[string]bool{}
	crows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info('history')`)
	if err != nil {
		return contract.Invalid("%s is not a mem0 history database: %v", path, err)
	}
	for crows.Next() {
		var c string
		if err := crows.Scan(&c); err == nil {
			cols[c] = true
		}
	}
	crows.Close()
	// The schema before mem0 0.1.x named the text new_value and the time
	// timestamp; either is read.
	first := func(names ...string) string {
		for _, n := range names {
			if cols[n] {
				return n
			}
		}
		return ""
	}
	textCol, timeCol := first("new_memory", "new_value"), first("created_at", "timestamp")
	for need, col := range map[string]string{"new_memory": textCol, "created_at": timeCol, "id": first("id"),
		"memory_id": first("memory_id"), "event": first("event")} {
		if col == "" {
			return contract.Invalid("%s is not a mem0 history database: table history has no column %s", path, need)
		}
	}
	opt := func(c, def string) string {
		if cols[c] {
			return "COALESCE(CAST(" + c + " AS TEXT), '')"
		}
		return def
	}
	q := `SELECT CAST(id AS TEXT), COALESCE(CAST(memory_id AS TEXT), ''), COALESCE(` + textCol + `, ''), COALESCE(event, ''),
		COALESCE(CAST(` + timeCol + ` AS TEXT), ''), ` + opt("is_deleted", "'0'") + `, ` + opt("actor_id", "''") + `
		FROM history ORDER BY ` + timeCol + `, rowid`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return contract.Invalid("cannot read %s: %v", path, err)
	}
	defer rows.Close()
	byMemory := map[string][]mem0Row{}
	var order []string
	for rows.Next() {
		var r mem0Row
		var del string
		if err := rows.Scan(&r.id, &r.memoryID, &r.newMemory, &r.event, &r.createdAt, &del, &r.actor); err != nil {
			return contract.Invalid("cannot read %s: %v", path, err)
		}
		r.deleted = del == "1" || strings.EqualFold(del, "true")
		if _, ok := byMemory[r.memoryID]; !ok {
			order = append(order, r.memoryID)
		}
		byMemory[r.memoryID] = append(byMemory[r.memoryID], r)
	}
	if err := rows.Err(); err != nil {
		return contract.Invalid("cannot read %s: %v", path, err)
	}
	sort.Strings(order)
	for _, id := range order {
		if err := mem0Versions(name, byMemory[id], sink); err != nil {
			return err
		}
	}
	return nil
}

// mem0Versions imports one memory's history: its latest text, and each
// earlier text superseded by it. A deleted memory is left out.
func mem0Versions(name string, rows []mem0Row, sink Sink) error {
	var versions []mem0Row
	for _, r := range rows {
		switch strings.ToUpper(r.event) {
		case "DELETE":
			sink.Omit("deleted memory (history rows)")
			return nil
		case "ADD", "UPDATE":
			if r.deleted {
				sink.Omit("deleted memory (history rows)")
				return nil
			}
			if strings.TrimSpace(r.newMemory) == "" {
				sink.Skip(Skip{Location: name + "#history/" + r.id, Reason: r.event + " without new_memory"})
				continue
			}
			versions = append(versions, r)
		default:
			sink.Omit(strings.ToUpper(r.event) + " event")
		}
	}
	if len(versions) == 0 {
		return nil
	}
	item := func(r mem0Row) contract.StoreItem {
		meta := contract.MemoryMeta{Namespace: ns("source", "mem0"), Tags: []string{"mem0"}, ThreadID: contract.Ptr(r.memoryID),
			ObservedAt: parseTime(r.createdAt)}
		if r.actor != "" {
			meta.ObservedActor = &contract.ObservedActor{ID: r.actor}
		}
		return contract.Learning(r.newMemory, contract.LearningFact, 1, meta)
	}
	latest := versions[len(versions)-1]
	succ := Record{Item: item(latest), Location: name + "#history/" + latest.id}
	if err := sink.Record(succ); err != nil {
		return err
	}
	seen := map[string]bool{latest.newMemory: true}
	for i := len(versions) - 2; i >= 0; i-- {
		v := versions[i]
		if seen[v.newMemory] {
			continue // the same text again: one record holds it
		}
		seen[v.newMemory] = true
		if err := sink.Record(Record{Item: item(v), Location: name + "#history/" + v.id, SupersededBy: &succ}); err != nil {
			return err
		}
	}
	return nil
}
