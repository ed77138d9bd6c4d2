package main

import (
	"fmt"
	"strings"
	"time"

	"mnemo/contract"
)

type turnT struct {
	role  contract.Role
	text  string
	tools []string
}

type scenario struct {
	ns   contract.Namespace
	tags []string
	// user is who opens the thread: "customer" or "staff".
	turns []turnT
}

const (
	user      = contract.RoleUser
	assistant = contract.RoleAssistant
	tool      = contract.RoleTool
	system    = contract.RoleSystem
)

var supportScenarios = []scenario{
	{nsSupport, []string{"failed-payment", "customer"}, []turnT{
		{user, "Hi, this is {cname} from {customer}. Our payment for invoice {inv} failed again. Can you check what is going on?", nil},
		{assistant, "Let me look up invoice {inv}.", []string{"lookup_invoice"}},
		{tool, "invoice {inv}: open, {cur} {amt}, due {day}; last attempt soft decline (do_not_honor); next retry in 2 days", nil},
		{assistant, "The bank declined the charge with a soft decline, which usually means it wants the cardholder to confirm. We will retry automatically in two days, or you can update the card and retry now from the invoice page.", nil},
		{user, "We added a new card just now. Can you retry?", nil},
		{assistant, "Retrying the payment with the new default card.", []string{"retry_payment"}},
		{tool, "payment succeeded: {cur} {amt} charged to card ending 4242", nil},
		{assistant, "Done: invoice {inv} is paid. You will get the receipt by email in a few minutes.", nil},
	}},
	{nsSupport, []string{"vat", "invoices", "customer"}, []turnT{
		{user, "Our VAT number is missing on invoice {inv}. Our accountant needs it for the reverse charge.", nil},
		{assistant, "I'll check the company details on your account.", []string{"lookup_customer"}},
		{tool, "customer {customer}: VAT id DE{vat}, validated {day}; billing address override: yes", nil},
		{assistant, "Your VAT number is valid, but the invoice was issued with a billing address override, which hit a known bug ({ticket}). I have asked billing to reissue it.", []string{"create_ticket"}},
		{tool, "ticket {ticket} created, priority normal, assigned to payments", nil},
		{assistant, "You will get the corrected invoice within two business days; the amount does not change.", nil},
	}},
	{nsSupport, []string{"sso", "auth", "customer"}, []turnT{
		{user, "Nobody at {customer} can log in since this morning, we get sent back to the login page in a loop.", nil},
		{assistant, "That sounds like an SSO problem. What time did the first failed attempt happen, roughly?", nil},
		{user, "Around 08:30 CET.", nil},
		{assistant, "Checking the gateway logs for your tenant.", []string{"search_logs"}},
		{tool, "auth-gateway 07:31:02Z tenant={tenant} saml: signature validation failed: certificate expired; 412 similar lines", nil},
		{assistant, "Your identity provider rotated its signing certificate and we still had the old one. I refreshed the metadata; please try again now.", []string{"refresh_sso_metadata"}},
		{tool, "tenant {tenant}: metadata refreshed, new certificate valid until 2029-{mm}-01", nil},
		{user, "It works again, thank you!", nil},
	}},
	{nsSupport, []string{"webhooks", "customer"}, []turnT{
		{user, "We received the invoice.paid webhook for {inv} three times. Is that a bug?", nil},
		{assistant, "Webhooks are delivered at least once, so duplicates can happen when your endpoint answers slowly. Let me check the deliveries.", []string{"list_webhook_deliveries"}},
		{tool, "3 deliveries for event evt_{m}{n}: 2 timed out after 10 s, 1 answered 200 in 11.2 s", nil},
		{assistant, "Your endpoint took longer than our 10-second timeout twice, so we retried. Please deduplicate on the Acme-Idempotency-Key header and answer before doing the slow work.", nil},
	}},
	{nsSupport, []string{"refunds", "customer"}, []turnT{
		{user, "We were charged twice for the {month} subscription. Can we get one refunded as a credit note?", nil},
		{assistant, "Looking at the payments for {customer}.", []string{"list_payments"}},
		{tool, "2 payments of {cur} {amt} on {day} for subscription sub_{n}{m}; the second came from a retried checkout", nil},
		{assistant, "You're right, the checkout was submitted twice. I've issued a credit note for the second payment.", []string{"issue_credit_note"}},
		{tool, "credit note CN-2026-{n}{m} issued: {cur} {amt}", nil},
		{assistant, "Credit note CN-2026-{n}{m} is on your account and will be applied to the next invoice.", nil},
	}},
	{nsSupport, []string{"exports", "customer"}, []turnT{
		{user, "The CSV export of our invoices never arrives. We have about {n},000 invoices.", nil},
		{assistant, "Large exports run in the background. Let me check the export job.", []string{"lookup_export"}},
		{tool, "export exp_{m}{n}: failed after 300 s (timeout), 0 rows written", nil},
		{assistant, "The export timed out because of its size. I started it again split by year; you'll get one email per year.", []string{"start_export"}},
		{tool, "exports queued: 2024, 2025, 2026", nil},
	}},
	{nsSupport, []string{"billing-email", "customer"}, []turnT{
		{user, "Please send invoices to finance@{domain} instead of my address.", nil},
		{assistant, "I'll update the billing email on the account.", []string{"update_customer"}},
		{tool, "customer {customer}: billing_email changed to finance@{domain}", nil},
		{assistant, "Done. The next invoices go to finance@{domain}; past invoices can be re-sent if you need them there too.", nil},
	}},
	{nsSupport, []string{"proration", "customer"}, []turnT{
		{user, "We upgraded to the Business plan on {day} and were charged the full price. Shouldn't it be prorated?", nil},
		{assistant, "Let me look at the invoice for the upgrade.", []string{"lookup_invoice"}},
		{tool, "invoice {inv}: Business plan, {cur} {amt}, no proration lines", nil},
		{assistant, "Today upgrades are charged in full and the unused time of the old plan is credited at renewal. Proration within the invoice is coming with proration v2. I've added your account to the early access list.", nil},
	}},
	{nsSupport, []string{"cancellation", "customer", "churn-risk"}, []turnT{
		{user, "How do we cancel? We're moving to another provider at the end of {month}.", nil},
		{assistant, "You can cancel under Billing > Subscriptions; the plan stays active until the end of the paid period. May I ask what made you decide to move?", nil},
		{user, "Mainly the missing multi-currency payouts. We get paid in GBP.", nil},
		{assistant, "Thank you, that is useful. Multi-currency payouts (GBP and CHF) are planned for this quarter. I'll let your account owner know, in case the timing changes your decision.", []string{"notify_account_owner"}},
		{tool, "account owner notified: {person}", nil},
	}},
	{nsSupport, []string{"receipts", "customer"}, []turnT{
		{user, "We don't receive receipt emails anymore. Last one was in {month}.", nil},
		{assistant, "Checking the email log for {customer}.", []string{"search_email_log"}},
		{tool, "receipts to ap@{domain}: hard bounce since {day} (mailbox does not exist)", nil},
		{assistant, "The receipts bounce because ap@{domain} no longer exists. Which address should we use instead?", nil},
		{user, "Use finance@{domain}.", nil},
		{assistant, "Updated. I've also re-sent the receipts since {day} to the new address.", []string{"update_customer", "resend_receipts"}},
	}},
}

var researchScenarios = []scenario{
	{nsResearcher, []string{"research", "postgres"}, []turnT{
		{user, "Can we move billing-db to Postgres 16 with logical replication and near-zero downtime?", nil},
		{assistant, "I'll check the restrictions of logical replication first.", []string{"web_search", "read_url"}},
		{tool, "postgresql.org/docs/16: sequences and DDL are not replicated; large objects are not replicated", nil},
		{assistant, "Yes, with two caveats: sequences must be copied at cutover, and schema changes must be frozen during the migration. billing-db has {n} sequences; a script can set them from the source right before switching.", nil},
	}},
	{nsResearcher, []string{"research", "payments", "dunning"}, []turnT{
		{user, "How many times are we allowed to retry a declined card payment?", nil},
		{assistant, "Searching the card network rules and our PSP's documentation.", []string{"web_search"}},
		{tool, "results: 'Visa retry rules: max 15 retries in 30 days' ; 'Mastercard: excessive retry fees after 10 attempts in 30 days' ; PSP docs: decline codes", nil},
		{assistant, "Soft declines may be retried, within limits of roughly 10-15 attempts in 30 days depending on the network; hard declines must never be retried. Our schedule of 4 retries in 7 days is well inside.", nil},
	}},
	{nsResearcher, []string{"research", "search", "latency"}, []turnT{
		{user, "Is OpenSearch concurrent segment search worth enabling for invoice search?", nil},
		{assistant, "Reading the 2.13 release notes and benchmarks.", []string{"read_url"}},
		{tool, "opensearch.org/blog: concurrent segment search GA in 2.12+; p99 improvements for large shards, more CPU per query", nil},
		{assistant, "For our largest tenants (shards over 20 GB) it should cut p99; for the rest it mostly costs CPU. Suggest enabling it per index for the top {n} accounts and measuring for a week.", nil},
	}},
	{nsResearcher, []string{"research", "outbox", "architecture"}, []turnT{
		{user, "What are the options for relaying the outbox table to consumers?", nil},
		{assistant, "Looking at the common patterns and tools.", []string{"web_search", "read_url"}},
		{tool, "patterns: polling publisher; transaction log tailing (Debezium); LISTEN/NOTIFY + polling fallback", nil},
		{assistant, "Polling every 200 ms with SKIP LOCKED is simplest and enough for our volume (about {n}0 events/s at peak). Debezium gives lower latency but adds Kafka Connect to operate.", nil},
	}},
	{nsResearcher, []string{"research", "go", "latency"}, []turnT{
		{user, "Did the Go 1.26 upgrade change billing-api latency?", nil},
		{assistant, "Comparing the canary and the baseline dashboards for the last week.", []string{"query_metrics"}},
		{tool, "billing-api p99: baseline {p99} ms, canary {p99b} ms; GC CPU 6.1% -> 4.3%", nil},
		{assistant, "p99 went from {p99} to {p99b} ms in the canary and GC CPU dropped by about a third. Worth rolling out.", nil},
	}},
	{nsResearcher, []string{"research", "code-search"}, []turnT{
		{user, "Where is the {entity} retry backoff configured, and what is the base delay?", nil},
		{assistant, "I'll ask the scout to search the repository.", []string{"ask_scout"}},
		{tool, "scout: {repo} internal/{entity}/retry.go: DefaultRetryPolicy Base {m}0ms, Attempts {n}", nil},
		{assistant, "It's in {repo}, internal/{entity}/retry.go: base {m}0 ms with full jitter, {n} attempts, capped at 30 s.", nil},
	}},
}

var scoutScenarios = []scenario{
	{nsScout, []string{"code-search"}, []turnT{
		{system, "You are scout, a code-search sub-agent of researcher. Answer with file paths and line numbers.", nil},
		{user, "Find where {entities} are written to the database in {repo}.", nil},
		{assistant, "Searching for INSERT statements on {entities}.", []string{"grep_repo"}},
		{tool, "internal/{entity}/store.go:41: INSERT INTO {entities} (id, account_id, ...)\nmigrations/0{n}_create_{entities}.sql:2: CREATE TABLE {entities}", nil},
		{assistant, "{entities} are inserted in internal/{entity}/store.go line 41; the table is created in migrations/0{n}_create_{entities}.sql.", []string{"read_file"}},
	}},
	{nsScout, []string{"code-search", "ownership"}, []turnT{
		{system, "You are scout, a code-search sub-agent of researcher. Answer with file paths and line numbers.", nil},
		{user, "Who owns internal/{entity} in {repo}?", nil},
		{assistant, "Reading CODEOWNERS and the git history.", []string{"read_file", "git_log"}},
		{tool, "CODEOWNERS: /internal/{entity}/ @acme/{oncall}\ngit log: {person} (23 commits), {person2} (9 commits)", nil},
		{assistant, "The {oncall} team owns it per CODEOWNERS; {person} made most of the recent changes.", nil},
	}},
}

var writerScenarios = []scenario{
	{nsWriter, []string{"release-notes"}, []turnT{
		{user, "Draft the release notes for 2026.{mm} from the merged PRs labelled user-facing.", nil},
		{assistant, "Reading the release plan and the merged PRs.", []string{"read_plan", "list_merged_prs"}},
		{tool, "{n} PRs labelled user-facing since v2026.{mmprev}: billing-api (4), checkout-web (3), notifier (2)", nil},
		{assistant, "Here is the draft, grouped by service, newest first, one line each with the ticket id. Please review the checkout-web lines; two of them mention Safari.", []string{"draft_section"}},
		{user, "Looks good. Replace 'log in' with 'sign in' everywhere.", nil},
		{assistant, "Done, and I've noted that as a style rule for future notes.", nil},
	}},
	{nsWriter, []string{"customer", "incident", "emails"}, []turnT{
		{user, "Write the customer email for {incident} ({title}). Keep it factual.", nil},
		{assistant, "Reading the postmortem.", []string{"read_doc"}},
		{tool, "postmortem {incident}: impact, timeline 13:05-13:50 UTC, root cause, action items", nil},
		{assistant, "Draft: 'On {day} between 13:05 and 13:50 UTC, some customers were affected by {title_lower}. The cause is fixed and we have added monitoring so that it is caught earlier. We are sorry for the trouble.'", nil},
	}},
	{nsWriter, []string{"docs", "knowledge-base"}, []turnT{
		{user, "Update the knowledge-base article on VAT numbers: past invoices are not changed automatically.", nil},
		{assistant, "Opening the article in all five languages.", []string{"read_doc"}},
		{tool, "kb/en/vat-id.md, kb/de/vat-id.md, kb/fr/vat-id.md, kb/es/vat-id.md, kb/ja/vat-id.md", nil},
		{assistant, "Updated the English source and queued translations for de, fr, es and ja.", []string{"write_doc", "request_translation"}},
	}},
}

var digestScenarios = []scenario{
	{nsDigest, []string{"digest"}, []turnT{
		{system, "Summarise what the agents of team:acme remembered on {day}. Keep corrections and new procedures; skip duplicates.", nil},
		{assistant, "Reading the memories written on {day}.", []string{"browse_memory"}},
		{tool, "{dtotal} new memories: support {dm}, researcher {dk}, writer 2; 1 correction; 2 candidates awaiting review", nil},
		{assistant, "Digest for {day}: {dtotal} new memories. Support learned preferences of {customer}; the researcher confirmed the Postgres 16 migration plan; one correction about {service} on-call hand-over. Two candidates wait for review.", []string{"post_message"}},
	}},
}

// conversation builds one thread from a scenario, possibly as one of several
// records covering turn ranges of a longer thread.
func (g *gen) conversations(sc scenario) []contract.StoreItem {
	vars := g.vars()
	cur := pick(g, currencies)
	amt := fmt.Sprintf("%d.%02d", g.between(49, 9800), g.r.IntN(100))
	cust := pick(g, customers)
	for i := 0; i+1 < len(vars); i += 2 {
		if vars[i] == "{customer}" {
			cust = vars[i+1]
		}
	}
	domain := strings.ToLower(strings.NewReplacer(" ", "", ".", "").Replace(strings.Fields(cust)[0])) + ".example"
	inc := pick(g, incidents)
	mm := g.between(2, 6)
	s := pick(g, services)
	p99 := max(s.p99, 200)
	agent := agentOf(sc.ns)
	start := g.observed()
	dm, dk := g.between(5, 40), g.between(1, 12)
	extra := []string{
		"{dtotal}", fmt.Sprint(dm + dk + 2), "{dm}", fmt.Sprint(dm), "{dk}", fmt.Sprint(dk),
		"{inv}", fmt.Sprintf("A-2026-%05d", g.between(100, 99999)), "{cur}", cur, "{amt}", amt,
		"{vat}", fmt.Sprintf("%09d", g.r.IntN(1_000_000_000)), "{tenant}", fmt.Sprintf("tn_%x", g.r.Uint32()),
		"{domain}", domain, "{mmprev}", fmt.Sprintf("%02d", mm-1), "{mm}", fmt.Sprintf("%02d", mm),
		"{k}", fmt.Sprint(g.between(1, 9)), "{title_lower}", strings.ToLower(inc.title), "{title}", inc.title,
		"{p99b}", fmt.Sprint(p99 * g.between(70, 95) / 100), "{p99}", fmt.Sprint(p99),
	}
	thread := g.threadID(agent)
	if sc.ns.Equal(nsDigest) {
		// The digest runs at 02:30 UTC about the day before.
		start = time.Date(start.Year(), start.Month(), start.Day(), 2, 30, 0, 0, time.UTC)
		thread = "digest-" + dayString(start)
		extra = append([]string{"{day}", dayString(start.AddDate(0, 0, -1))}, extra...)
	}
	r := strings.NewReplacer(append(extra, vars...)...)
	at := start
	var turns []contract.Turn
	var firstTool *contract.ToolCallRef
	for _, tt := range sc.turns {
		at = at.Add(time.Duration(g.between(5, 240)) * time.Second)
		t := at
		turn := contract.Turn{Role: tt.role, Text: r.Replace(tt.text), At: &t}
		for _, name := range tt.tools {
			ref := contract.ToolCallRef{Name: name, ID: ptr(fmt.Sprintf("call_%s", strings.ToLower(fmt.Sprintf("%08X", g.r.Uint32()))))}
			turn.ToolCalls = append(turn.ToolCalls, ref)
			if firstTool == nil {
				c := ref
				firstTool = &c
			}
		}
		turns = append(turns, turn)
	}
	mkMeta := func(first, last int) contract.MemoryMeta {
		observed := *turns[first].At
		meta := contract.MemoryMeta{
			Namespace: sc.ns, ThreadID: ptr(thread), Tags: tagsOf(sc.tags), ObservedAt: &observed,
			Source: contract.SourceRef{Kind: contract.SourceConversation, ID: ptr(thread)},
		}
		if agent != "" {
			meta.AgentID = ptr(agent)
		}
		if sc.ns.Equal(nsSupport) {
			meta.Workspace = ptr("acme-support")
			meta.ObservedActor = &contract.ObservedActor{ID: "cust-" + strings.Split(domain, ".")[0]}
		}
		if first != 0 || last != len(turns)-1 {
			meta.Turns = &contract.TurnRange{First: uint32(first), Last: uint32(last)}
		}
		for _, t := range turns[first : last+1] {
			if len(t.ToolCalls) > 0 {
				c := t.ToolCalls[0]
				meta.ToolCall = &c
				break
			}
		}
		return meta
	}
	// Long threads are remembered in two halves, as agents chunk them.
	if len(turns) >= 6 && g.chance(0.35) {
		cut := len(turns) / 2
		return []contract.StoreItem{
			contract.Conversation(turns[:cut], mkMeta(0, cut-1)),
			contract.Conversation(turns[cut:], mkMeta(cut, len(turns)-1)),
		}
	}
	return []contract.StoreItem{contract.Conversation(turns, mkMeta(0, len(turns)-1))}
}
