package main

import (
	"fmt"
	"strings"

	"mnemo/contract"
)

// codeTemplate is one source file shape. Placeholders: {entity} {entities}
// {Entity} {service} {svc} {n} {m} {table}. path is relative to the repo root.
type codeTemplate struct {
	lang, path, body string
}

var codeTemplates = []codeTemplate{
	// Go: billing-api, notifier, auth-gateway.
	{"go", "internal/{entity}/retry.go", `package {entity}

import (
	"math/rand/v2"
	"time"
)

// RetryPolicy spaces out retries of {entity} calls to the payment provider.
// The provider rate-limits bursts, so attempts back off exponentially with
// full jitter and never exceed MaxDelay.
type RetryPolicy struct {
	Base     time.Duration
	MaxDelay time.Duration
	Attempts int
}

// DefaultRetryPolicy is what {service} uses in production ({n} attempts).
var DefaultRetryPolicy = RetryPolicy{Base: {m}0 * time.Millisecond, MaxDelay: 30 * time.Second, Attempts: {n}}

// Next returns the delay before attempt (1-based), or false when the policy is spent.
func (p RetryPolicy) Next(attempt int) (time.Duration, bool) {
	if attempt > p.Attempts {
		return 0, false
	}
	ceiling := p.Base << (attempt - 1)
	if ceiling > p.MaxDelay || ceiling <= 0 {
		ceiling = p.MaxDelay
	}
	return time.Duration(rand.Int64N(int64(ceiling))), true
}
`},
	{"go", "internal/http/{entity}_handler.go", `package http

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/acme/{service}/internal/{entity}"
)

// get{Entity} serves GET /v1/{entities}/{id}. Unknown ids are 404; ids of another
// account are 404 too, so that ids cannot be probed across tenants.
func (s *Server) get{Entity}(w http.ResponseWriter, r *http.Request) {
	account := AccountFrom(r.Context())
	id := r.PathValue("id")
	got, err := s.{entities}.Get(r.Context(), account, id)
	if errors.Is(err, {entity}.ErrNotFound) {
		writeError(w, http.StatusNotFound, "{entity}_not_found", "no such {entity}: "+id)
		return
	}
	if err != nil {
		s.log.Error("get {entity}", "err", err, "account", account)
		writeError(w, http.StatusInternalServerError, "internal", "try again later")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(got)
}
`},
	{"go", "internal/{entity}/store.go", `package {entity}

import (
	"context"
	"database/sql"
	"errors"
)

// ErrNotFound is returned when no {entity} has the id in the account.
var ErrNotFound = errors.New("{entity} not found")

// Store reads and writes {entities} in Postgres.
type Store struct{ db *sql.DB }

// Get loads one {entity}; the account is part of the key so tenants never leak.
func (s *Store) Get(ctx context.Context, account, id string) (*{Entity}, error) {
	const q = ` + "`" + `SELECT id, account_id, status, amount_minor, currency, created_at
		FROM {table} WHERE account_id = $1 AND id = $2` + "`" + `
	var x {Entity}
	err := s.db.QueryRowContext(ctx, q, account, id).Scan(&x.ID, &x.AccountID, &x.Status, &x.AmountMinor, &x.Currency, &x.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return &x, err
}
`},
	{"go", "internal/{entity}/validate_test.go", `package {entity}

import "testing"

func TestValidate{Entity}(t *testing.T) {
	cases := []struct {
		name    string
		in      {Entity}
		wantErr string
	}{
		{"ok", {Entity}{AmountMinor: 1999, Currency: "EUR"}, ""},
		{"negative amount", {Entity}{AmountMinor: -1, Currency: "EUR"}, "amount must not be negative"},
		{"unknown currency", {Entity}{AmountMinor: 100, Currency: "EURO"}, "currency EURO is not ISO 4217"},
		{"zero decimal currency", {Entity}{AmountMinor: {n}00, Currency: "JPY"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate()
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("Validate() = %q, want %q", got, tc.wantErr)
			}
		})
	}
}
`},
	{"go", "internal/worker/{entity}_events.go", `package worker

import (
	"context"
	"log/slog"
)

// {Entity}Events consumes {entity}.* events from the Redis stream and hands
// each to the handler. A failed event is retried {n} times and then parked in
// the dead-letter stream, so one bad message never blocks the partition.
func (w *Worker) {Entity}Events(ctx context.Context) error {
	for {
		batch, err := w.stream.Read(ctx, "{entity}.events", w.group, 64)
		if err != nil {
			return err
		}
		for _, ev := range batch {
			if err := w.handle{Entity}(ctx, ev); err != nil {
				w.log.Warn("{entity} event failed", slog.String("id", ev.ID), slog.Any("err", err))
				w.retryOrPark(ctx, ev, {n})
				continue
			}
			w.stream.Ack(ctx, "{entity}.events", w.group, ev.ID)
		}
	}
}
`},
	// Python: search-indexer, warehouse helpers.
	{"python", "indexer/transforms/{entity}.py", `"""Turn {entity} rows from the billing replica into OpenSearch documents."""

from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass(frozen=True)
class {Entity}Doc:
    id: str
    account_id: str
    status: str
    amount: float
    currency: str
    created_at: datetime


def to_document(row: dict) -> {Entity}Doc:
    # Amounts are stored in minor units; search shows major units.
    exponent = 0 if row["currency"] in ("JPY", "KRW") else 2
    return {Entity}Doc(
        id=row["id"],
        account_id=row["account_id"],
        status=row["status"],
        amount=row["amount_minor"] / 10**exponent,
        currency=row["currency"],
        created_at=row["created_at"].astimezone(timezone.utc),
    )
`},
	{"python", "tests/test_{entity}_transform.py", `import pytest
from datetime import datetime, timezone

from indexer.transforms.{entity} import to_document


@pytest.mark.parametrize(
    "currency,minor,expected",
    [("EUR", 1999, 19.99), ("JPY", {n}00, {n}00), ("USD", 5, 0.05)],
)
def test_amount_is_in_major_units(currency, minor, expected):
    row = {
        "id": "{entity}_{m}",
        "account_id": "acct_1",
        "status": "paid",
        "amount_minor": minor,
        "currency": currency,
        "created_at": datetime(2026, 3, 1, tzinfo=timezone.utc),
    }
    assert to_document(row).amount == pytest.approx(expected)
`},
	{"python", "scripts/backfill_{entities}.py", `#!/usr/bin/env python3
"""Backfill the {entities} index in batches of {n}00 without hurting the replica.

Usage: backfill_{entities}.py --since 2026-01-01 [--dry-run]
"""

import argparse
import time

from indexer import db, search
from indexer.transforms.{entity} import to_document


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--since", required=True)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    total = 0
    for batch in db.stream("{table}", since=args.since, batch_size={n}00):
        docs = [to_document(row) for row in batch]
        if not args.dry_run:
            search.bulk_index("{entities}", docs, refresh=False)
        total += len(docs)
        time.sleep(0.{m})  # keep replica lag under 5 s
    print(f"indexed {total} {entities}")


if __name__ == "__main__":
    main()
`},
	{"python", "indexer/jobs/{entity}_sync.py", `"""Incremental sync of {entities}: reads the outbox and indexes changed rows."""

import logging

from indexer import db, search
from indexer.transforms.{entity} import to_document

log = logging.getLogger(__name__)


def run_once(checkpoint: int) -> int:
    rows = db.outbox_since("{table}", checkpoint, limit=500)
    if not rows:
        return checkpoint
    search.bulk_index("{entities}", [to_document(r) for r in rows])
    log.info("synced %d {entities}, last seq %d", len(rows), rows[-1]["seq"])
    return rows[-1]["seq"]
`},
	// TypeScript: checkout-web.
	{"typescript", "src/components/{Entity}Summary.tsx", `import { formatMoney } from "../lib/money";
import type { {Entity} } from "../api/{entities}";

type Props = { {entity}: {Entity}; locale: string };

// {Entity}Summary is the card at the top of the {entity} page in the portal.
export function {Entity}Summary({ {entity}, locale }: Props) {
  return (
    <section aria-labelledby="{entity}-title" className="summary-card">
      <h2 id="{entity}-title">{{entity}.number}</h2>
      <p className="amount">{formatMoney({entity}.amountMinor, {entity}.currency, locale)}</p>
      <StatusBadge status={{entity}.status} />
    </section>
  );
}
`},
	{"typescript", "src/api/{entities}.ts", `import { z } from "zod";
import { apiFetch } from "./client";

export const {Entity}Schema = z.object({
  id: z.string(),
  number: z.string(),
  status: z.enum(["draft", "open", "paid", "void"]),
  amountMinor: z.number().int(),
  currency: z.string().length(3),
  createdAt: z.string().datetime(),
});

export type {Entity} = z.infer<typeof {Entity}Schema>;

// fetch{Entity} validates the payload so a contract drift fails loudly in the portal.
export async function fetch{Entity}(id: string): Promise<{Entity}> {
  const res = await apiFetch(` + "`" + `/v1/{entities}/${encodeURIComponent(id)}` + "`" + `);
  return {Entity}Schema.parse(await res.json());
}
`},
	{"typescript", "src/hooks/use{Entity}.ts", `import { useQuery } from "@tanstack/react-query";
import { fetch{Entity} } from "../api/{entities}";

// use{Entity} caches a {entity} for {n} seconds; the portal refetches on focus.
export function use{Entity}(id: string) {
  return useQuery({
    queryKey: ["{entity}", id],
    queryFn: () => fetch{Entity}(id),
    staleTime: {n}_000,
    retry: (count, err) => count < 3 && !String(err).includes("404"),
  });
}
`},
	{"typescript", "src/api/{entities}.test.ts", `import { describe, expect, it } from "vitest";
import { {Entity}Schema } from "./{entities}";

describe("{Entity}Schema", () => {
  it("accepts a paid {entity}", () => {
    const parsed = {Entity}Schema.parse({
      id: "{entity}_{m}", number: "A-2026-{n}", status: "paid",
      amountMinor: 1999, currency: "EUR", createdAt: "2026-03-01T10:00:00Z",
    });
    expect(parsed.status).toBe("paid");
  });

  it("rejects a fractional amount", () => {
    expect(() => {Entity}Schema.parse({ amountMinor: 19.99 })).toThrow();
  });
});
`},
	// Rust: ledger.
	{"rust", "src/{entity}/mod.rs", `//! Ledger postings for {entities}.

use crate::money::{Amount, Currency};
use crate::journal::{Entry, Posting};

/// Builds the journal entry for a settled {entity}. Debits and credits must
/// balance per currency; the journal refuses the entry otherwise.
pub fn entry_for(id: &str, amount: Amount, currency: Currency) -> Entry {
    Entry::new(format!("{entity}:{}", id))
        .with(Posting::debit("assets:psp_clearing", amount, currency))
        .with(Posting::credit("revenue:{entities}", amount, currency))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_balances() {
        let e = entry_for("{entity}_{m}", Amount::minor({n}00), Currency::EUR);
        assert!(e.is_balanced());
    }
}
`},
	{"rust", "src/{entity}/error.rs", `use thiserror::Error;

/// Everything that can go wrong when posting a {entity}.
#[derive(Debug, Error)]
pub enum {Entity}Error {
    #[error("{entity} {0} was already posted")]
    AlreadyPosted(String),
    #[error("currency {0} is not enabled for this account")]
    CurrencyDisabled(String),
    #[error("journal is unbalanced by {0} minor units")]
    Unbalanced(i64),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}
`},
	{"rust", "src/{entity}/repo.rs", `use sqlx::PgPool;

/// Inserts the postings of a {entity} in one transaction; a duplicate id is a
/// replay and returns the existing entry id, so retries are safe.
pub async fn post(pool: &PgPool, entry: &crate::journal::Entry) -> Result<i64, super::error::{Entity}Error> {
    let mut tx = pool.begin().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO journal_entries (external_id, kind) VALUES ($1, '{entity}')
         ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
         RETURNING id",
    )
    .bind(&entry.external_id)
    .fetch_one(&mut *tx)
    .await?;
    for p in &entry.postings {
        sqlx::query("INSERT INTO postings (entry_id, account, amount_minor, currency) VALUES ($1, $2, $3, $4)")
            .bind(id).bind(&p.account).bind(p.amount.minor()).bind(p.currency.code())
            .execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(id)
}
`},
	// SQL: warehouse models and migrations.
	{"sql", "migrations/{m}{n}_create_{table}.sql", `-- {entities}: one row per {entity}, owned by {service}.
CREATE TABLE {table} (
    id            text PRIMARY KEY,
    account_id    text NOT NULL REFERENCES accounts(id),
    status        text NOT NULL CHECK (status IN ('draft', 'open', 'paid', 'void')),
    amount_minor  bigint NOT NULL CHECK (amount_minor >= 0),
    currency      char(3) NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX {table}_account_created ON {table} (account_id, created_at DESC);
`},
	{"sql", "models/marts/fct_{entities}_daily.sql", `-- Daily {entities} per currency for the finance dashboard.
{{ config(materialized='incremental', unique_key=['day', 'currency']) }}

SELECT
    DATE(created_at) AS day,
    currency,
    COUNT(*) AS {entities},
    SUM(amount_minor) AS amount_minor
FROM {{ ref('stg_{entities}') }}
WHERE status != 'void'
{% if is_incremental() %}
  AND DATE(created_at) >= DATE_SUB(CURRENT_DATE(), INTERVAL {n} DAY)
{% endif %}
GROUP BY 1, 2
`},
	{"sql", "analyses/{entities}_by_customer.sql", `-- Top customers by {entity} volume in the last {n} days (asked by finance).
SELECT c.name, COUNT(x.id) AS {entities}, SUM(x.amount_minor) / 100.0 AS amount
FROM {table} x
JOIN customers c ON c.id = x.account_id
WHERE x.created_at >= CURRENT_DATE - INTERVAL '{n} days'
GROUP BY c.name
ORDER BY amount DESC
LIMIT {m};
`},
	{"sql", "migrations/{m}{n}_index_{table}_status.sql", `-- The dunning job scans open {entities} by due date; without this index it
-- seq-scanned {table} every 5 minutes ({incident}).
CREATE INDEX CONCURRENTLY IF NOT EXISTS {table}_open_due
    ON {table} (due_at)
    WHERE status = 'open';
`},
	// Shell: infra.
	{"shell", "scripts/deploy-{service}.sh", `#!/usr/bin/env bash
# Deploy {service} to an environment through Argo CD and wait for health.
set -euo pipefail

env="${1:?usage: deploy-{service}.sh staging|prod <image-tag>}"
tag="${2:?missing image tag}"

argocd app set "{service}-${env}" --helm-set image.tag="${tag}"
argocd app sync "{service}-${env}" --timeout {n}0
argocd app wait "{service}-${env}" --health --timeout 600
echo "{service} ${tag} is healthy in ${env}"
`},
	{"shell", "scripts/backup-{svc}-db.sh", `#!/usr/bin/env bash
# Nightly logical backup of the {service} database to the backups bucket.
# Keeps {n} days; restores are tested every Monday by restore-check.sh.
set -euo pipefail

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
pg_dump --format=custom --no-owner "${DATABASE_URL}" \
  | gzip -9 \
  | aws s3 cp - "s3://acme-backups/{service}/${stamp}.dump.gz" --sse aws:kms
aws s3 ls "s3://acme-backups/{service}/" | awk '{print $4}' | sort | head -n -{n} \
  | xargs -r -I{} aws s3 rm "s3://acme-backups/{service}/{}"
`},
	{"shell", "scripts/healthcheck-{service}.sh", `#!/usr/bin/env bash
# Used by the synthetic monitor: fails when {service} answers slower than {m}00 ms.
set -euo pipefail

url="${HEALTH_URL:-https://{service}.internal.acme.dev/healthz}"
t="$(curl -fsS -o /dev/null -w '%{time_total}' "$url")"
awk -v t="$t" 'BEGIN { exit (t > 0.{m}) }' || { echo "slow: ${t}s"; exit 1; }
`},
	{"shell", "scripts/grep-{svc}-errors.sh", `#!/usr/bin/env bash
# Count {service} errors per code in the last hour, the first thing to run when paged.
set -euo pipefail

kubectl logs -n prod -l app={service} --since=1h --max-log-requests={n} \
  | jq -r 'select(.level == "error") | .code' \
  | sort | uniq -c | sort -rn | head -20
`},
}

var serviceFolders = map[string][]string{
	"go":         {"billing-api", "notifier", "auth-gateway"},
	"python":     {"search-indexer"},
	"typescript": {"checkout-web"},
	"rust":       {"ledger"},
	"sql":        {"warehouse", "billing-api"},
	"shell":      {"infra"},
}

var localRoots = []string{"/home/priya/src", "/home/lena/code", "/Users/kenji/work", "/srv/agents/workspace"}

// codeDocument builds a source file document from a template and an entity.
func (g *gen) codeDocument(t codeTemplate, e entity) contract.StoreItem {
	svcName := pick(g, serviceFolders[t.lang])
	var svc service
	for _, s := range services {
		if s.name == svcName {
			svc = s
		}
	}
	n, m := g.between(3, 9), g.between(2, 8)
	r := strings.NewReplacer("{entities}", e.many, "{entity}", e.one, "{Entity}", e.camel,
		"{service}", svc.name, "{svc}", strings.ReplaceAll(svc.name, "-", "_"), "{table}", e.many,
		"{n}", fmt.Sprint(n), "{m}", fmt.Sprint(m), "{incident}", incident(g))
	path := r.Replace(t.path)
	body := r.Replace(t.body)
	folder := path[:max(0, strings.LastIndex(path, "/"))]
	commit := g.commit()
	at := g.observed()
	meta := contract.MemoryMeta{
		Namespace:  pick(g, []contract.Namespace{nsScout, nsScout, nsResearcher, nsTeam}),
		Workspace:  ptr("acme-platform"),
		FilePath:   ptr(path),
		Folder:     ptr(folder),
		Language:   ptr(t.lang),
		Repo:       ptr(svc.repo),
		Commit:     ptr(commit),
		ObservedAt: &at,
		Tags:       tagsOf([]string{"code", svc.name, t.lang}),
	}
	if g.chance(0.5) {
		meta.Source = contract.SourceRef{Kind: contract.SourceGithub, ID: ptr(svc.repo)}
		meta.URL = ptr("https://github.com/" + svc.repo + "/blob/" + commit + "/" + path)
	} else {
		root := pick(g, localRoots) + "/" + svc.name
		meta.Source = contract.SourceRef{Kind: contract.SourceFolder, ID: ptr(root)}
	}
	if meta.Namespace.Equal(nsScout) {
		meta.AgentID = ptr("scout")
		meta.ToolCall = &contract.ToolCallRef{Name: "read_file", ID: ptr(fmt.Sprintf("call-%06d", g.between(1, 999999)))}
	}
	title := path
	mime := map[string]string{"go": "text/x-go", "python": "text/x-python", "typescript": "text/typescript",
		"rust": "text/x-rust", "sql": "application/sql", "shell": "text/x-shellscript"}[t.lang]
	return contract.StoreItem{Type: contract.KindDocument, Title: &title, Body: contract.TextBody(body), Mime: ptr(mime), Meta: meta}
}
