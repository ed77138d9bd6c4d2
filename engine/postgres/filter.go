package postgres

import (
	"strconv"
	"strings"
	"time"

	"mnemo/contract"
)

// query collects a WHERE clause and its positional arguments.
type query struct {
	where []string
	args  []any
}

// arg adds an argument and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

func (q *query) add(clause string) { q.where = append(q.where, clause) }

// clause is the WHERE clause, "TRUE" when empty.
func (q *query) clause() string {
	if len(q.where) == 0 {
		return "TRUE"
	}
	return "(" + strings.Join(q.where, ") AND (") + ")"
}

// filter adds the SQL form of f, exactly MetaFilter.Matches plus AdmitsStatus
// (ranked applies fetch's rule: only active unless statuses are named).
func (q *query) filter(f *contract.MetaFilter, ranked bool) {
	q.reach(f.Reach)
	exact := func(col string, v *string) {
		if v != nil {
			q.add(col + " = " + q.arg(*v))
		}
	}
	exact("workspace", f.Workspace)
	exact("language", f.Language)
	exact("repo", f.Repo)
	exact("commit_id", f.Commit)
	exact("url", f.URL)
	exact("tool_call", f.ToolCall)
	path := func(col string, v *string) {
		if v == nil {
			return
		}
		base := strings.TrimRight(*v, "/")
		q.add(col + " = " + q.arg(*v) + " OR " + col + " = " + q.arg(base) + " OR starts_with(" + col + ", " + q.arg(base+"/") + "::text)")
	}
	path("folder", f.Folder)
	path("file_path", f.FilePath)
	sameID := func(col string, v *string) {
		if v != nil {
			q.add(col + " = " + q.arg(*v) + " OR " + col + " = " + q.arg(contract.RedactedID(*v)))
		}
	}
	sameID("thread_id", f.ThreadID)
	sameID("agent_id", f.AgentID)
	sameID("source_id", f.SourceID)
	if f.Turns != nil {
		q.add("turn_first = " + q.arg(int64(f.Turns.First)) + " AND turn_last = " + q.arg(int64(f.Turns.Last)))
	}
	if len(f.Kinds) > 0 {
		ks := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			ks[i] = string(k)
		}
		q.add("kind = ANY(" + q.arg(ks) + ")")
	}
	if len(f.Sources) > 0 {
		ss := make([]string, len(f.Sources))
		for i, s := range f.Sources {
			ss[i] = string(s)
		}
		q.add("source_kind = ANY(" + q.arg(ss) + ")")
	}
	if len(f.TagsAny) > 0 {
		q.add("tags && " + q.arg(f.TagsAny) + "::text[]")
	}
	if f.ObservedAfter != nil {
		at, ns := splitTime(*f.ObservedAfter)
		q.add("(observed_at, observed_ns) >= (" + q.arg(at) + "::timestamptz, " + q.arg(ns) + "::integer)")
	}
	if f.ObservedBefore != nil {
		at, ns := splitTime(*f.ObservedBefore)
		q.add("(observed_at, observed_ns) < (" + q.arg(at) + "::timestamptz, " + q.arg(ns) + "::integer)")
	}
	q.statuses(f.Statuses, ranked)
}

// statuses is AdmitsStatus in SQL.
func (q *query) statuses(st []contract.Status, ranked bool) {
	if len(st) == 0 {
		if ranked {
			q.add("status = 'active'")
		}
		return
	}
	ss := make([]string, len(st))
	for i, s := range st {
		ss[i] = string(s)
	}
	q.add("status = ANY(" + q.arg(ss) + ")")
}

// reach is contract.AdmittedBy in SQL: the reach's nodes exactly (the ns
// column is the namespace's printed form), and with descendants every
// namespace below `at` whose last service segment, if any, is within `at`.
func (q *query) reach(r *contract.Reach) {
	rr := contract.ReachSubtree(contract.Root())
	if r != nil {
		rr = *r
	}
	if rr.Descendants && rr.At.IsRoot() {
		// Root and everything below without a service segment.
		q.add("last_svc < 0")
		return
	}
	nodes := rr.Nodes()
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.String()
	}
	var clause string
	if len(names) == 1 {
		clause = "ns = " + q.arg(names[0])
	} else {
		clause = "ns = ANY(" + q.arg(names) + ")"
	}
	if rr.Descendants {
		clause += " OR (starts_with(ns, " + q.arg(rr.At.String()+"/") + "::text) AND last_svc < " + q.arg(int16(rr.At.Depth())) + "::smallint)"
	}
	q.add(clause)
}

// splitTime is an instant as PostgreSQL holds it (microseconds) and the
// nanoseconds below, so comparisons keep Go's full precision.
func splitTime(t time.Time) (time.Time, int32) {
	t = t.UTC()
	us := t.Truncate(time.Microsecond)
	return us, int32(t.Sub(us))
}

// likeEscape escapes LIKE's wildcards (backslash is the escape character).
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}
