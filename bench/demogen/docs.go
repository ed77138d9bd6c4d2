package main

import (
	"fmt"
	"strings"
	"time"

	"mnemo/contract"
)

const markdown = "text/markdown"

// runbookTemplates are the operational pages every service has.
var runbookTemplates = []struct{ slug, title, body string }{
	{"rotate-secrets", "Rotate {service} secrets", `# Rotate {service} secrets

Owner: {oncall} rotation. Last reviewed by {person} on {day}.

## When

- every 90 days (calendar reminder in #{oncall})
- immediately after anyone with access leaves the team
- when a secret shows up in a log, a screenshot or a ticket

## Steps

1. Create the new value in Vault: ` + "`vault kv put secret/{service}/current value=@new.txt`" + `.
2. Restart the deployment so pods read it:

   ` + "```sh" + `
   kubectl rollout restart deploy/{service} -n prod
   kubectl rollout status deploy/{service} -n prod --timeout=10m
   ` + "```" + `

3. Watch the 5xx rate on the {service} dashboard for 15 minutes; it must stay under 0.1%.
4. Revoke the previous value and note the rotation in the audit sheet.

## If it goes wrong

Roll back to the previous secret version (` + "`vault kv rollback -version=N`" + `) and restart again.
`},
	{"rollback", "Roll back a {service} deploy", `# Roll back a {service} deploy

Use this when a release of {service} raises errors or latency above the SLO (p99 {p99} ms).

1. Find the last healthy revision: ` + "`argocd app history {service}-prod`" + `.
2. Roll back: ` + "`argocd app rollback {service}-prod <revision>`" + `.
3. Post in #incidents: what you rolled back, why, and the revision.
4. Freeze deploys: add the ` + "`deploy-freeze`" + ` label to the {repo} main branch protection.

> Rolling back does not undo database migrations. If the release ran one, read
> "Migrations and rollbacks" in the handbook before you continue.
`},
	{"high-latency", "{service}: high latency", `# {service}: high latency

**Alert:** ` + "`{svc}_p99_latency_ms > {p99}`" + ` for 10 minutes.

## Check first

- Is there an incident on the status page of the cloud provider?
- Did a deploy land in the last hour? (` + "`argocd app history {service}-prod`" + `)
- Is {store} healthy? Look at connections and slow queries.

## Usual causes

| cause | how it shows | fix |
|---|---|---|
| connection pool exhausted | many requests waiting on ` + "`pool.acquire`" + ` | raise the pool or kill the slow query |
| a slow {entity} query | one endpoint slow, others fine | check ` + "`pg_stat_statements`" + `, add the index |
| noisy tenant | one account id dominates traces | apply the per-account rate limit |

Escalate to {person} if the cause is not clear after 30 minutes.
`},
	{"drain-queue", "Drain the {service} dead-letter stream", `# Drain the {service} dead-letter stream

Events that fail {n} times are parked in ` + "`{entity}.events.dead`" + `.

1. Look at what is parked: ` + "`redis-cli XRANGE {entity}.events.dead - + COUNT 20`" + `.
2. Fix the cause (usually a customer webhook endpoint that returns 410 or a schema change).
3. Replay: ` + "`{svc}-cli dlq replay --stream {entity}.events.dead --limit 500`" + `.
4. Confirm the parked count goes to zero, then close the ticket.

Never delete parked events without asking the payments rotation: some of them move money.
`},
	{"restore-backup", "Restore the {service} database", `# Restore the {service} database

Backups are logical dumps in ` + "`s3://acme-backups/{service}/`" + `, one per night, kept {n} days.

## Steps

1. Pick the dump: ` + "`aws s3 ls s3://acme-backups/{service}/ | tail`" + `.
2. Restore into a **new** database, never over the live one:

   ` + "```sh" + `
   createdb {svc}_restore
   aws s3 cp s3://acme-backups/{service}/<stamp>.dump.gz - | gunzip | pg_restore -d {svc}_restore
   ` + "```" + `

3. Compare row counts of ` + "`{entities}`" + ` with the warehouse for the same day.
4. Switch the service with a config change, not by renaming databases.
`},
}

// adrs are architecture decision records, written once.
var adrs = []struct{ title, status, context, decision, consequences string }{
	{"Use Postgres for the ledger", "accepted", "The ledger needs serialisable transactions and point-in-time recovery; the team already runs Postgres for billing.", "The ledger stores journal entries and postings in Postgres 16 with SERIALIZABLE isolation for posting transactions.", "We must watch serialisation failures and retry them; we get PITR and familiar tooling."},
	{"Money as integer minor units", "accepted", "Floating point produced one-cent differences between invoices and the ledger in 2025.", "Every amount is an int64 of minor units plus an ISO 4217 code. JSON carries `amount_minor` and `currency`.", "Zero-decimal currencies (JPY, KRW) need care in display code; a helper in each language formats amounts."},
	{"Webhooks are at-least-once", "accepted", "Customers asked for exactly-once delivery; it cannot be guaranteed over HTTP.", "notifier delivers at least once and signs every payload with an idempotency key customers can deduplicate on.", "Docs must explain deduplication; support gets tickets about duplicates anyway."},
	{"Redis streams for internal events", "superseded by ADR-0011", "We needed a queue quickly and Redis was already there.", "Internal events go through Redis streams with consumer groups.", "No replay beyond the stream's max length; see ADR-0011 for the move to the Postgres outbox."},
	{"Feature flags in the config service", "accepted", "Long-lived branches caused painful merges in checkout-web.", "Flags live in the config service, are evaluated per account, and are removed within two sprints of full rollout.", "A weekly job lists flags older than 30 days in #platform."},
	{"OpenSearch for invoice search", "accepted", "Customers search invoices by number, customer name and amount; Postgres full-text search was too slow on the largest accounts.", "search-indexer keeps an OpenSearch index fed from the billing outbox.", "The index may lag by seconds; the portal shows 'updating' when it does."},
	{"SSO through auth-gateway only", "accepted", "Each service implemented its own OAuth callback.", "auth-gateway owns every SSO integration and issues short-lived session tokens to the other services.", "One more hop on login; one place to audit."},
	{"UTC everywhere on the server", "accepted", "Month-end invoices were generated twice for accounts in UTC+13.", "Servers, logs, databases and APIs use UTC; only rendering uses the customer's zone.", "Billing periods are defined in UTC; docs explain this to customers."},
	{"Dunning schedule of four retries", "accepted", "Card networks limit retries; too many retries cost fees and goodwill.", "Failed payments are retried on days 1, 3, 5 and 7 with a dunning email after the second failure.", "Some recoverable payments are lost after day 7; finance accepted the trade-off."},
	{"Terraform for all cloud resources", "accepted", "Console changes drifted from what the team believed was deployed.", "Every cloud resource is declared in acme/infra; console access is read-only except during incidents.", "Slower emergency changes; an audit log of every change."},
	{"Postgres outbox instead of Redis streams", "accepted", "Redis streams lost events during a failover (INC-2077).", "Services write events to an outbox table in the same transaction as the change; a relay publishes them.", "Exactly one source of truth per service; the relay must be monitored."},
	{"Agent memory for support", "proposed", "The support agent answers the same questions repeatedly and forgets customer preferences between chats.", "Give the support agent a memory namespace under team:acme, with curation by the support lead before memories become active.", "Someone must review candidate memories weekly; mistakes must be easy to forget."},
}

// incidents are postmortem seeds.
var incidents = []struct{ title, impact, cause, fix, service string }{
	{"Duplicate receipt emails", "About 1,900 customers got two receipts for one payment.", "notifier acknowledged stream messages after sending, and a pod restart replayed a batch.", "Deduplicate on the payment id before sending; acknowledge only after recording the send.", "notifier"},
	{"Checkout 502s during deploy", "Hosted checkout returned 502 for 6 minutes; about 300 payments were retried by customers.", "The readiness probe passed before the app had loaded its config.", "Readiness now checks that config and the billing-api client are ready.", "checkout-web"},
	{"Ledger reconciliation mismatch", "Daily reconciliation was off by 4,213.50 EUR for two days.", "A refund posted in billing-api failed to reach the ledger because of a schema change in the event.", "Contract tests between billing-api events and the ledger consumer.", "ledger"},
	{"SSO login loop for one tenant", "Users of one Enterprise customer could not sign in for 3 hours.", "The customer's IdP rotated its signing certificate and auth-gateway cached the old metadata for 24 hours.", "Metadata refresh every hour and on signature failure.", "auth-gateway"},
	{"Search index 40 minutes behind", "Invoices created in the portal did not show up in search for up to 40 minutes.", "A backfill job ran during business hours and saturated the indexer's bulk queue.", "Backfills only run between 01:00 and 04:00 UTC and use a separate queue.", "search-indexer"},
	{"Invoice PDFs missing VAT id", "Invoices for 212 EU customers lacked their VAT id.", "A template change dropped the field when the customer had a billing address override.", "Golden-file tests for invoice PDFs per country.", "billing-api"},
	{"Webhook storm to one customer", "One customer's endpoint received 80k webhooks in an hour.", "Their endpoint returned 200 slowly, so notifier timed out and retried every event.", "Per-endpoint concurrency limit and a timeout that counts as delivered once the response starts.", "notifier"},
	{"Connection pool exhausted in billing-api", "API errors at 12% for 25 minutes.", "A new report query held connections for 40 s while scanning invoices without an index.", "Index on invoices(account_id, created_at) and a statement timeout for report endpoints.", "billing-api"},
}

// designDocs are longer pieces of prose with structure.
var designDocs = []struct{ title, body string }{
	{"Proration on plan changes", `## Problem

Customers who upgrade mid-cycle are charged the full new price and credited nothing for the old plan. Support handles about 40 tickets a month about it.

## Proposal

- Compute proration per second of the remaining period, in minor units, rounding half-even.
- Show the proration as two invoice lines: credit for unused time, charge for the new plan.
- Downgrades take effect at the end of the period; no refund.

## Open questions

1. Do we prorate seats added mid-cycle the same way?
2. How do coupons interact with prorated lines?

## Rollout

Behind the ` + "`proration_v2`" + ` flag, first for monthly plans, then annual.`},
	{"Agent memory review queue", `## Goal

Memories written by the support agent start as **candidates**. A person approves or rejects them before they influence answers.

## Design

- Candidates are listed newest first with their evidence (thread and turns).
- Approving keeps the id; rejecting forgets the memory everywhere.
- The queue shows confidence, so low-confidence items can be batch-rejected.

## Metrics

- time from creation to review (target: under 3 days)
- share of candidates rejected (if above 30%, the extraction prompt needs work)`},
	{"Multi-currency payouts", `## Context

Payouts are only in EUR today. Customers in the UK and Switzerland pay conversion fees twice.

## Proposal

Hold balances per currency in the ledger and pay out in GBP and CHF from local accounts.

` + "```text" + `
balance(account, currency) = sum(postings where account = :acct and currency = :cur)
` + "```" + `

## Risks

- FX exposure while balances are held
- more reconciliation jobs (one per currency)`},
	{"Rate limiting the public API", `## Current state

A global limit of 100 requests per second per key, enforced in auth-gateway with a token bucket in Redis.

## Change

- Per-endpoint limits: list endpoints 20/s, writes 50/s, reads 100/s.
- ` + "`Retry-After`" + ` on every 429.
- Enterprise customers can buy higher limits.

## Why not in each service?

One place to observe and tune, and services stay simple.`},
	{"Invoice numbering per country", `## Requirement

Some countries (Portugal, Italy, Spain) require gapless, sequential invoice numbers per legal entity and year.

## Design

- A counter row per (entity, country, year) locked with SELECT ... FOR UPDATE in the finalisation transaction.
- Voided invoices keep their number; credit notes have their own sequence.

## Testing

Property test: finalising invoices concurrently never produces a gap or a duplicate.`},
}

// handbookPages are stable team knowledge.
var handbookPages = []struct{ path, title, body string }{
	{"handbook/oncall.md", "On-call at Acme", "# On-call at Acme\n\n- Rotations: payments, platform, web, security, data.\n- Hand-over is a 15-minute call; write open issues in the hand-over doc.\n- Page response: acknowledge within 5 minutes, first update within 15.\n- After a page outside working hours, take the next morning off.\n"},
	{"handbook/code-review.md", "Code review", "# Code review\n\n1. Review within one working day.\n2. Ask questions rather than give orders.\n3. Approve when it is better than before, not when it is perfect.\n4. Changes that move money need two approvals.\n"},
	{"handbook/writing.md", "Writing at Acme", "# Writing at Acme\n\nLead with the answer. Use ISO dates. Write money with its currency (EUR 12.50). Prefer tables for numbers and lists for steps. Spell out acronyms once.\n"},
	{"handbook/releases.md", "How we release", "# How we release\n\n- Trunk-based: main is always deployable.\n- Every merge deploys to staging; production is a promotion after the canary (5% for 30 minutes).\n- Release notes are drafted by the writer agent and reviewed by the service owner.\n"},
	{"handbook/security.md", "Security basics", "# Security basics\n\n- No secrets in code, tickets or chat; use Vault.\n- Production access is through the bastion with SSO and is logged.\n- Report a suspected leak in #security at once; rotating early is cheap.\n"},
	{"handbook/support-tone.md", "Support tone of voice", "# Support tone of voice\n\nBe direct and kind. Say what we know and what we do not. Give a time for the next update. Never blame the customer's bank or card.\n"},
	{"handbook/data-access.md", "Access to customer data", "# Access to customer data\n\nThe warehouse holds pseudonymised data only. Raw customer data needs a ticket approved by Grace and expires after 7 days.\n"},
	{"handbook/glossary.md", "Glossary", "# Glossary\n\n| term | meaning |\n|---|---|\n| PSP | payment service provider |\n| dunning | retrying failed payments and reminding the customer |\n| minor units | cents, pence, yen: the smallest unit of a currency |\n| SCA | strong customer authentication (PSD2) |\n"},
}

func (g *gen) serviceVars(s service) *strings.Replacer {
	p := pick(g, people)
	e := pick(g, entities)
	day := g.observed()
	return strings.NewReplacer("{service}", s.name, "{svc}", strings.ReplaceAll(s.name, "-", "_"), "{repo}", s.repo,
		"{store}", s.store, "{oncall}", s.oncall, "{p99}", fmt.Sprint(max(s.p99, 1500)), "{person}", p.name,
		"{day}", dayString(day), "{entities}", e.many, "{entity}", e.one, "{n}", fmt.Sprint(g.between(3, 30)))
}

func (g *gen) markdownDoc(title, body, path string, ns contract.Namespace, tags []string) contract.StoreItem {
	// The title is rendered as the heading, so the body does not repeat it.
	if strings.HasPrefix(body, "# ") {
		if nl := strings.Index(body, "\n"); nl >= 0 {
			body = strings.TrimLeft(body[nl+1:], "\n")
		}
	}
	at := g.observed()
	folder := path[:max(0, strings.LastIndex(path, "/"))]
	meta := contract.MemoryMeta{
		Namespace: ns, Workspace: ptr("acme-docs"), FilePath: ptr(path), Folder: ptr(folder),
		Language: ptr("en"), ObservedAt: &at, Tags: tagsOf(tags, "docs"),
	}
	switch {
	case strings.HasPrefix(path, "handbook/") || strings.HasPrefix(path, "adr/"):
		meta.Repo = ptr("acme/handbook")
		meta.Commit = ptr(g.commit())
		meta.Source = contract.SourceRef{Kind: contract.SourceGithub, ID: ptr("acme/handbook")}
		meta.URL = ptr("https://github.com/acme/handbook/blob/main/" + path)
	case strings.HasPrefix(path, "wiki/"):
		meta.Source = contract.SourceRef{Kind: contract.SourceImport, ID: ptr("confluence-export-2025-12")}
	default:
		meta.Source = contract.SourceRef{Kind: contract.SourceFolder, ID: ptr("/srv/agents/workspace/acme-docs")}
	}
	return contract.StoreItem{Type: contract.KindDocument, Title: ptr(title), Body: contract.TextBody(body), Mime: ptr(markdown), Meta: meta}
}

// documents returns every non-code document of the demo, in a fixed order.
func (g *gen) documents() []contract.StoreItem {
	var out []contract.StoreItem
	for _, s := range services {
		for _, rb := range runbookTemplates {
			r := g.serviceVars(s)
			out = append(out, g.markdownDoc(r.Replace(rb.title), r.Replace(rb.body),
				"runbooks/"+s.name+"/"+rb.slug+".md", pick(g, []contract.Namespace{nsTeam, nsTeam, nsSupport}),
				[]string{"runbook", s.name, s.oncall}))
		}
	}
	for i, a := range adrs {
		body := fmt.Sprintf("# ADR-%04d: %s\n\nStatus: %s\n\n## Context\n\n%s\n\n## Decision\n\n%s\n\n## Consequences\n\n%s\n",
			i+1, a.title, a.status, a.context, a.decision, a.consequences)
		slug := strings.ToLower(strings.NewReplacer(" ", "-", ".", "").Replace(a.title))
		out = append(out, g.markdownDoc(fmt.Sprintf("ADR-%04d: %s", i+1, a.title), body,
			fmt.Sprintf("adr/%04d-%s.md", i+1, slug), nsTeam, []string{"adr", "architecture"}))
	}
	for _, inc := range incidents {
		id := incident(g)
		day := g.observed()
		var svc service
		for _, x := range services {
			if x.name == inc.service {
				svc = x
			}
		}
		body := fmt.Sprintf("# %s: %s\n\n**Date:** %s  \n**Service:** %s  \n**Severity:** %s\n\n## Impact\n\n%s\n\n## Timeline (UTC)\n\n- %s detected by the %s alert\n- %s mitigated\n- %s resolved\n\n## Root cause\n\n%s\n\n## Action items\n\n- [x] %s\n- [ ] Add an alert that would have fired earlier (owner: %s)\n- [ ] Share the lessons in the next platform sync\n",
			id, inc.title, dayString(day), svc.name, pick(g, []string{"SEV-2", "SEV-3"}), inc.impact,
			day.Format("15:04"), svc.oncall, day.Add(time.Duration(g.between(10, 90))*time.Minute).Format("15:04"),
			day.Add(time.Duration(g.between(100, 300))*time.Minute).Format("15:04"), inc.cause, inc.fix, pick(g, people).name)
		out = append(out, g.markdownDoc(id+": "+inc.title, body, "postmortems/"+dayString(day)+"-"+strings.ToLower(id)+".md",
			pick(g, []contract.Namespace{nsTeam, nsResearcher}), []string{"postmortem", "incident", svc.name}))
	}
	for _, d := range designDocs {
		author := pick(g, people)
		body := "# " + d.title + "\n\nAuthor: " + author.name + "  \nStatus: in review\n\n" + d.body + "\n"
		slug := strings.ToLower(strings.ReplaceAll(d.title, " ", "-"))
		out = append(out, g.markdownDoc(d.title, body, "design/"+slug+".md", pick(g, []contract.Namespace{nsTeam, nsPriya}),
			[]string{"design-doc"}))
	}
	for _, h := range handbookPages {
		out = append(out, g.markdownDoc(h.title, h.body, h.path, nsTeam, []string{"handbook"}))
	}
	// Weekly notes: one platform sync and one support review per week.
	for w := demoStart; w.Before(demoEnd); w = w.AddDate(0, 0, 7) {
		out = append(out, g.weeklyNote(w, "platform"), g.weeklyNote(w.AddDate(0, 0, 3), "support"))
	}
	// Old wiki pages imported once at the root.
	for _, s := range services {
		r := g.serviceVars(s)
		body := r.Replace("# {service}\n\n{service} " + s.desc + ".\n\n- Repository: {repo}\n- Storage: {store}\n- On-call: {oncall}\n- Dashboards: Grafana folder '{service}'\n\n_Imported from Confluence; may be out of date._\n")
		out = append(out, g.markdownDoc(s.name+" overview (wiki)", body, "wiki/services/"+s.name+".md", nsRoot,
			[]string{"wiki", s.name}))
	}
	out = append(out, g.localisedDocs()...)
	out = append(out, g.webDocs()...)
	return out
}

var syncTopics = map[string][]string{
	"platform": {"Postgres 16 upgrade of billing-db: staging done, production planned for the {day} window",
		"notifier dead-letter stream has {n} parked events; {person} to drain",
		"OpenSearch renewal: decide between 3 and 2 data nodes",
		"Argo CD upgrade to 2.14 rolled out to staging",
		"Flags older than 30 days: {n}; owners pinged",
		"Latency of billing-api p99 at {p99} ms, inside budget",
		"Ledger reconciliation clean all week",
		"Load test of checkout-web at 2x peak passed"},
	"support": {"{n} tickets about failed card payments, mostly soft declines",
		"Knowledge-base article on VAT ids rewritten by the writer agent",
		"Candidate memories from the support agent: {n} approved, {m} rejected",
		"Escalations: {n}, all answered within SLA",
		"Customers asking for CSV export of credit notes",
		"Spanish and Japanese macros updated",
		"SSO login loop tickets down after the metadata refresh fix"},
}

func (g *gen) weeklyNote(day time.Time, kind string) contract.StoreItem {
	s := pick(g, services)
	r := strings.NewReplacer("{day}", dayString(day.AddDate(0, 0, 10)), "{n}", fmt.Sprint(g.between(2, 40)),
		"{m}", fmt.Sprint(g.between(1, 12)), "{person}", pick(g, people).name, "{p99}", fmt.Sprint(max(s.p99, 200)))
	var b strings.Builder
	title := fmt.Sprintf("%s sync %s", strings.ToUpper(kind[:1])+kind[1:], dayString(day))
	fmt.Fprintf(&b, "# %s\n\nAttendees: ", title)
	for i, p := range people[:g.between(3, len(people))] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.name)
	}
	b.WriteString("\n\n## Notes\n\n")
	tps := syncTopics[kind]
	start := g.r.IntN(len(tps))
	for i := 0; i < g.between(3, 5); i++ {
		fmt.Fprintf(&b, "- %s\n", r.Replace(tps[(start+i)%len(tps)]))
	}
	fmt.Fprintf(&b, "\n## Actions\n\n- %s: follow up on %s\n", pick(g, people).name, ticket(g))
	ns := nsTeam
	if kind == "support" {
		ns = nsSupport
	}
	it := g.markdownDoc(title, b.String(), fmt.Sprintf("notes/%s/%s.md", kind, dayString(day)), ns, []string{"meeting-notes", kind})
	at := day.Add(16 * time.Hour)
	it.Meta.ObservedAt = &at
	return it
}
