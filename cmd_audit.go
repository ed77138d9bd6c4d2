package main

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/server/audit"
)

type auditFlags struct {
	since string
	limit int
}

func newAuditCommand(a *app) *cobra.Command {
	var f auditFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Export the serve-mode audit log as JSONL",
		Long: `Print the audit log kept in the store by "mnemo serve": one JSON object per
line, oldest first, for every mutation (store, forget, review, supersede, ...)
and every refused request: {"at", "principal", "role", "via", "op", "ids" |
"filter" | "reach", "count", "skipped"?, "detail"?, "refused"?}.

--since takes an RFC 3339 instant or a duration back from now (24h, 90m). On a
store a running server holds, or with --remote, the server answers (admins only).`,
		Example: `  mnemo audit --since 24h
  mnemo audit --since 2026-11-29T00:00:00Z --limit 100 | jq 'select(.refused)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := f.query(time.Now())
			if err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			reader, ok := e.(audit.Reader)
			if !ok {
				return contract.Unsupported("this engine keeps no audit log")
			}
			events, err := reader.ReadAudit(cmd.Context(), q)
			if err != nil {
				return err
			}
			if a.human() {
				return a.answer(nil, func(s *cliout.Screen) { cliout.DrawAudit(s, events) })
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			for _, ev := range events {
				if err := enc.Encode(ev); err != nil {
					return contract.EngineErr("cannot encode an audit event: %w", err)
				}
			}
			_, err = a.stdout.Write(buf.Bytes())
			return err
		},
	}
	cmd.Flags().StringVar(&f.since, "since", "", "only events at or after this instant (RFC 3339) or this long ago (24h)")
	cmd.Flags().IntVar(&f.limit, "limit", 0, "at most this many events (0: all)")
	return cmd
}

func (f auditFlags) query(now time.Time) (audit.Query, error) {
	q := audit.Query{Limit: f.limit}
	if f.limit < 0 {
		return q, usageError("--limit must not be negative")
	}
	if f.since != "" {
		if d, err := time.ParseDuration(f.since); err == nil && d >= 0 {
			q.Since = now.Add(-d)
		} else if t, err := contract.ParseTime(f.since); err == nil {
			q.Since = t
		} else {
			return q, usageError("--since takes an RFC 3339 instant or a duration such as 24h, not `" + f.since + "`")
		}
	}
	return q, nil
}
