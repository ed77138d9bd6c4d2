package main

import (
	"fmt"
	"strings"

	"mnemo/contract"
)

// learningTemplate is one thing an agent may have learned. Placeholders:
// {person} {person2} {role} {service} {service2} {repo} {store} {desc} {p99}
// {oncall} {weekday} {weekday2} {customer} {cname} {entity} {entities}
// {n} {m} {pr} {ticket} {day} {month} {secret}.
type learningTemplate struct {
	ns   contract.Namespace
	tags []string
	text string
	// fromPerson marks learnings observed from what a person said.
	fromPerson bool
}

var preferenceTemplates = []learningTemplate{
	{nsPriya, []string{"writing", "design-docs"}, "Priya wants design docs to open with a one-paragraph summary and the decision being asked for, then the options.", true},
	{nsPriya, []string{"code-review"}, "Priya prefers review comments phrased as questions (\"what happens if the retry fires twice?\") rather than commands.", true},
	{nsPriya, []string{"reporting"}, "Priya reads status updates on {weekday} mornings; send the weekly summary before 09:00 CET.", true},
	{nsPriya, []string{"reporting", "dates"}, "Priya prefers ISO dates (2026-03-14) over US-style dates in every report and spreadsheet.", true},
	{nsPriya, []string{"code-review", "pull-requests"}, "Priya likes PR descriptions with a 'How to test' section and the ticket id in the title, e.g. \"{ticket}: {service} retry jitter\".", true},
	{nsPriya, []string{"metrics", "reporting"}, "Priya wants latency reported as p50/p95/p99 tables, never as averages; averages hide the tail that customers feel.", true},
	{nsPriya, []string{"oncall", "paging"}, "Priya does not want to be paged for {service} warnings outside business hours, only for customer-facing SLO breaches.", true},
	{nsPriya, []string{"writing"}, "Priya prefers the short answer first and the details after a horizontal rule.", true},
	{nsPriya, []string{"calendar"}, "Priya keeps {weekday} afternoons for deep work; schedule reviews and 1:1s around them.", true},
	{nsPriya, []string{"go", "testing"}, "Priya prefers Go table tests with named cases over one test function per case.", true},
	{nsPriya, []string{"tooling"}, "Priya uses a dark terminal theme and asked that dashboards not rely on red/green alone.", true},
	{nsPriya, []string{"meetings"}, "Priya prefers async decisions in the design-doc comments; meetings only when a thread passes 20 comments.", true},
	{nsTeam, []string{"git", "conventions"}, "The team squash-merges feature branches into main; merge commits are only used on release branches.", false},
	{nsTeam, []string{"git", "conventions"}, "Commit messages start with the service or package name, e.g. \"{service}: fix retry jitter\", in the imperative mood.", false},
	{nsTeam, []string{"money", "conventions"}, "Money amounts are integer minor units (cents) with an ISO currency code everywhere; floats are rejected in review.", false},
	{nsTeam, []string{"code-review"}, "Changes to {service} need one approval; changes touching {service2} and money movement need two.", false},
	{nsTeam, []string{"release", "feature-flags"}, "The {oncall} team prefers feature flags over long-lived branches; flags are removed within two sprints.", false},
	{nsTeam, []string{"observability", "conventions"}, "Logs and dashboards use UTC; local time appears only in customer-facing emails.", false},
	{nsTeam, []string{"incident", "oncall"}, "{person} prefers pairing on incident follow-ups rather than async review of the fix.", true},
	{nsTeam, []string{"python", "testing"}, "The data team uses pytest with fixtures, not unittest classes; {person} asks for parametrize over loops.", true},
	{nsTeam, []string{"typescript", "frontend"}, "{person} prefers named exports and zod schemas at every API boundary in checkout-web.", true},
	{nsWriter, []string{"release-notes", "customer"}, "{customer} wants release notes without marketing language: what changed, who is affected, what to do.", false},
	{nsWriter, []string{"style", "customer"}, "Use British spelling in emails to {customer}; their finance team flagged 'canceled' as a typo.", false},
	{nsWriter, []string{"style", "docs"}, "Docs for checkout-web are read by designers too: spell out acronyms on first use (PSP, SCA, 3DS).", false},
	{nsWriter, []string{"release-notes"}, "{person} prefers changelog entries grouped by service, newest first, one line each with the ticket id.", true},
	{nsWriter, []string{"i18n", "release-notes"}, "Release notes go out in English, German and Japanese the same day; French and Spanish follow within a day.", false},
	{nsWriter, []string{"style"}, "Headings in customer docs are sentence case ('Update a payment method'), never title case.", false},
	{nsWriter, []string{"style", "tone"}, "{person} asked the writer to drop exclamation marks from customer emails about failed payments.", true},
	{nsSupport, []string{"customer", "contact"}, "{customer} prefers contact by email, never phone; the billing contact is {cname}.", false},
	{nsSupport, []string{"customer", "invoices"}, "{cname} at {customer} wants invoices as PDF attachments rather than portal links.", false},
	{nsSupport, []string{"customer", "refunds"}, "{customer} wants refunds issued as credit notes instead of card refunds, for their bookkeeping.", false},
	{nsSupport, []string{"customer", "i18n"}, "{cname} at {customer} prefers answers in {language}.", false},
	{nsSupport, []string{"customer", "escalation"}, "{customer} asked that outages be reported to their ops channel within 30 minutes, even before a cause is known.", false},
	{nsResearcher, []string{"benchmarks", "research"}, "For benchmarks the team wants medians and p95 over at least 20 runs, with the machine and load written down.", false},
	{nsResearcher, []string{"research", "sources"}, "{person} prefers primary sources (RFCs, vendor docs, release notes) over blog posts in research summaries.", true},
	{nsScout, []string{"code-search"}, "When scouting a repo, start from the service's cmd/ and internal/ folders; vendor/ and generated code are noise.", false},
}

var factTemplates = []learningTemplate{
	{nsTeam, []string{"architecture"}, "{service} {desc}; it lives in {repo}.", false},
	{nsTeam, []string{"architecture", "storage"}, "{service} stores its data in {store}.", false},
	{nsTeam, []string{"latency", "slo"}, "The p99 latency budget of {service} is {p99} ms at the load balancer.", false},
	{nsTeam, []string{"oncall"}, "{service} belongs to the {oncall} on-call rotation, which hands over on {weekday} at 10:00 UTC.", false},
	{nsTeam, []string{"deploy"}, "{service} deploys through Argo CD from the main branch of {repo}; a production rollout takes about {n} minutes.", false},
	{nsTeam, []string{"retention", "compliance"}, "{entities} are kept for {n} days in {service}; older {entities} are archived to cold storage in eu-west-1.", false},
	{nsTeam, []string{"webhooks", "retries"}, "notifier retries a failed webhook delivery {retries} times with exponential backoff capped at {n} minutes.", false},
	{nsTeam, []string{"capacity"}, "Staging runs one replica of {service}; production runs {replicas} replicas across two zones.", false},
	{nsTeam, []string{"rate-limits", "api"}, "The public API allows {n} requests per second per API key; bursts up to {m} are absorbed by the gateway.", false},
	{nsTeam, []string{"invoices", "billing"}, "Invoices are finalized at 00:00 UTC on the first day of the billing period; drafts can be edited until then.", false},
	{nsTeam, []string{"ledger", "invariants"}, "The ledger rejects any journal entry whose debits and credits do not sum to zero in every currency.", false},
	{nsTeam, []string{"people"}, "{person} is the {role} and the first contact for {service} questions.", false},
	{nsTeam, []string{"observability"}, "{service} exports Prometheus metrics with the prefix acme_{svc}_; its dashboards are in the Grafana folder '{service}'.", false},
	{nsTeam, []string{"tax", "billing"}, "EU VAT rates are synced daily at 04:00 UTC from the tax service; a failed sync keeps yesterday's rates.", false},
	{nsTeam, []string{"security", "auth"}, "auth-gateway session tokens live {n} minutes; refresh tokens live 30 days and are bound to the device.", false},
	{nsTeam, []string{"database", "postgres"}, "{pgstore} has a connection limit of {conns}; {pgservice} uses a PgBouncer pool of {n}.", false},
	{nsResearcher, []string{"research", "postgres"}, "Postgres 16 logical replication does not replicate sequences; the ledger migration must copy them by hand.", false},
	{nsResearcher, []string{"research", "search"}, "OpenSearch 2.13 refreshes indexes every second by default; search-indexer sets refresh_interval to 30s during backfills.", false},
	{nsResearcher, []string{"research", "payments"}, "Card networks allow a merchant to retry a soft-declined payment at most {retries} times in 16 days.", false},
	{nsResearcher, []string{"research", "go"}, "Go 1.26 made the green tea garbage collector the default; billing-api saw p99 drop by about {n}% in the canary.", false},
	{nsResearcher, []string{"research", "incident"}, "The {day} outage of {service} was caused by a connection pool exhausted by a slow {entity} query ({incident}).", false},
	{nsSupport, []string{"customer", "contract"}, "{customer} is on the Enterprise plan with annual invoicing and net-{terms} payment terms.", false},
	{nsSupport, []string{"customer", "sso"}, "{customer} signs in through SSO with {idp}; their tenant is configured in auth-gateway.", false},
	{nsSupport, []string{"customer", "billing"}, "{customer} pays in {currency} and has {n} active subscriptions.", false},
	{nsSupport, []string{"knowledge-base"}, "A failed card payment is retried on days 1, 3, 5 and 7; the dunning email goes out after the second failure.", false},
	{nsSupport, []string{"knowledge-base", "invoices"}, "Customers can download every past invoice as PDF from Billing > Invoices in the portal; CSV export covers 24 months.", false},
	{nsScout, []string{"code-search"}, "The {entity} retry logic lives in {repo} under internal/{entity}/retry.go; the backoff base is {n} ms.", false},
	{nsScout, []string{"code-search"}, "{repo} pins its Go toolchain in go.mod and runs golangci-lint in CI with the config in .golangci.yml.", false},
	{nsDigest, []string{"digest"}, "The nightly digest runs at 02:30 UTC and summarises the last 24 hours of memory written under team:acme.", false},
	{nsRoot, []string{"company"}, "Acme's fiscal year starts on 1 February; quarterly reports close on the 5th working day after quarter end.", false},
	{nsRoot, []string{"company", "holidays"}, "The office in Berlin is closed on 24 and 31 December; support runs a reduced shift from Lisbon.", false},
}

var procedureTemplates = []learningTemplate{
	{nsTeam, []string{"security", "secrets", "runbook"}, "To rotate the {secret} of {service}: 1. create the new value in Vault at secret/{service}/{secretslug}; 2. run `kubectl rollout restart deploy/{service} -n prod`; 3. watch the 5xx rate stay under 0.1% for 15 minutes; 4. revoke the old value.", false},
	{nsTeam, []string{"search", "runbook"}, "To rebuild the search index for {entities}: run `make reindex ENTITY={entity} ENV=staging`, compare document counts with the warehouse, then repeat with ENV=prod between 01:00 and 04:00 UTC.", false},
	{nsTeam, []string{"deploy", "rollback", "runbook"}, "To roll back {service}: `argocd app rollback {service}-prod <revision>`, post in #incidents, and freeze deploys of {service} until the cause is known.", false},
	{nsTeam, []string{"onboarding", "access"}, "New engineers get access by opening a PR to acme/infra that adds them to teams/{oncall}.yaml; {person} approves the security groups.", false},
	{nsTeam, []string{"database", "migrations"}, "Before a migration on {store}: take a snapshot, run it on staging with production-sized data, and check that no lock is held longer than 2 seconds.", false},
	{nsTeam, []string{"release"}, "Release {service}: merge to main, tag v{major}.{minor}.{patch}, wait for the canary (5% for 30 minutes), then promote with `make promote SERVICE={service}`.", false},
	{nsTeam, []string{"incident"}, "When paged for {service}: acknowledge within 5 minutes, open an incident channel named #inc-{svc}-{daycompact}, and post the first status update within 15 minutes.", false},
	{nsTeam, []string{"ledger", "reconciliation"}, "Daily reconciliation: run `ledger-cli reconcile --date {day}`, and if the diff is not zero open a ticket for the payments rotation before 10:00 UTC.", false},
	{nsSupport, []string{"refunds", "approvals"}, "To refund more than 5,000 EUR: open the payment in the admin console, choose 'Refund as credit note', add the ticket id, and ask a payments engineer to approve in #payments-approvals.", false},
	{nsSupport, []string{"dunning"}, "When a customer disputes a dunning email: pause dunning with `billing-cli dunning pause --sub <id>`, reply within 4 business hours, and tell the account owner.", false},
	{nsSupport, []string{"triage"}, "Support triage: tag the ticket with the product area, check the status page for open incidents, search the knowledge base, and answer Enterprise customers within 4 business hours.", false},
	{nsSupport, []string{"invoices"}, "To re-send an invoice: find it with `lookup_invoice`, check the billing email on the customer record, then call `resend_invoice`; never paste the PDF link into chat.", false},
	{nsSupport, []string{"sso", "auth"}, "To debug an SSO login loop: ask for the time of the attempt, search auth-gateway logs for the tenant id, and check the IdP certificate expiry first; most loops are expired certificates.", false},
	{nsWriter, []string{"release-notes"}, "Release notes: collect PRs labelled user-facing since the last tag, group them by service, write one line per change with the ticket id, and ask {person} to review.", false},
	{nsWriter, []string{"customer", "emails"}, "Incident emails to customers: say what happened, when it started and ended (UTC), who was affected, and what we changed. No speculation about causes before the postmortem.", false},
	{nsResearcher, []string{"benchmarks"}, "To benchmark a {service} change: run the load test for 10 minutes at {n} rps on staging, record p50/p95/p99 and error rate, and repeat three times on the old build.", false},
	{nsScout, []string{"code-search"}, "To find who owns a file: read CODEOWNERS in the repo root first, then `git log --format='%an' -- <path> | sort | uniq -c | sort -rn | head`.", false},
	{nsTeam, []string{"postgres", "runbook"}, "To find what holds a lock on {store}: `SELECT pid, query, wait_event FROM pg_stat_activity WHERE state <> 'idle' ORDER BY query_start`, then cancel with pg_cancel_backend before reaching for pg_terminate_backend.", false},
	{nsTeam, []string{"flags", "release"}, "To remove a feature flag: confirm it has been at 100% for two weeks, delete the checks in {repo}, deploy, then delete the flag in the config service; never the other way round.", false},
	{nsSupport, []string{"vat", "invoices"}, "When a customer's VAT id is missing on an invoice: check the id in VIES, fix it on the customer record, and ask billing for a corrected invoice; never edit a finalized invoice by hand.", false},
	{nsSupport, []string{"escalation"}, "Escalate to the {oncall} rotation when more than {n} customers report the same problem within an hour; link the tickets in #support-escalations.", false},
	{nsWriter, []string{"i18n", "release-notes"}, "Translation procedure: freeze the English source, send it with the glossary to the translation service, and have {person} check the {language} version before it goes out.", false},
	{nsDigest, []string{"digest"}, "Digest procedure: group yesterday's memories by namespace, keep corrections and new procedures, drop duplicates, and post the summary to #acme-digest at 07:00 CET.", false},
}

var correctionTemplates = []learningTemplate{
	{nsTeam, []string{"webhooks", "retries"}, "Correction: notifier retries webhooks {retries} times, not {retries2}; the default changed in PR #{pr}.", false},
	{nsSupport, []string{"customer", "contract"}, "Correction: {customer} is on net-{terms} terms, not net-{terms2}; the contract was amended on {day}.", false},
	{nsTeam, []string{"oncall"}, "Earlier note was wrong: the {oncall} on-call hand-over is on {weekday}, not {weekday2}.", false},
	{nsTeam, []string{"people"}, "Correction: {person} no longer owns {service}; ask {person2} instead (since {day}).", false},
	{nsTeam, []string{"latency", "slo"}, "Correction: the p99 budget of {service} is {p99} ms; the 500 ms figure was for the batch export endpoint.", false},
	{nsTeam, []string{"invoices", "architecture"}, "Correction: invoice PDFs are rendered by billing-api, not notifier; notifier only sends them.", false},
	{nsTeam, []string{"database"}, "Correction: the staging database moved to pg-staging-{n}.internal on {day}; the old host no longer accepts connections.", false},
	{nsWriter, []string{"style"}, "Correction from {person}: release notes use 'sign in', not 'log in', in every language's source text.", true},
	{nsSupport, []string{"knowledge-base"}, "Correction: the CSV invoice export covers 24 months, not 12; the knowledge-base article was updated on {day}.", false},
	{nsResearcher, []string{"research", "postgres"}, "Correction: the {service} slowdown on {day} was not autovacuum; it was a missing index on {entities}(customer_id, created_at).", false},
	{nsPriya, []string{"reporting"}, "Correction: Priya wants the weekly summary on {weekday}, not {weekday2} (she changed her planning day).", true},
	{nsScout, []string{"code-search"}, "Correction: the {entity} handler moved from internal/api to internal/http/{entity} in {repo} (PR #{pr}).", false},
}

var otherTemplates = []learningTemplate{
	{nsResearcher, []string{"research", "question"}, "To check: does {service} still need {replicas} replicas after the Go 1.26 upgrade? CPU per request dropped in the canary.", false},
	{nsSupport, []string{"customer", "feedback"}, "{cname} at {customer} said the new invoice layout is much clearer; worth quoting in the {month} newsletter.", false},
	{nsWriter, []string{"docs", "idea"}, "Idea: a glossary page in every language, linked from the first use of PSP, SCA and dunning.", false},
	{nsScout, []string{"code-search", "tech-debt"}, "{repo} has {n} TODO comments older than a year under internal/{entity}; most are about retries.", false},
	{nsTeam, []string{"architecture", "question"}, "Open question: should {service} move its queue from Redis streams to Postgres LISTEN/NOTIFY? {person} wants load numbers first.", false},
	{nsTeam, []string{"idea", "portal"}, "Idea from {person}: show the ledger balance next to each invoice in the customer portal.", true},
	{nsSupport, []string{"customer", "churn-risk"}, "{customer} mentioned they may switch to monthly invoicing next quarter; worth a call from their account owner.", false},
	{nsSupport, []string{"trends"}, "Most support tickets in {month} were about {topic}.", false},
	{nsTeam, []string{"pricing"}, "Reminder: the {month} price change must be announced to customers 30 days ahead.", false},
	{nsResearcher, []string{"research", "question"}, "Unverified: {service} may be paying for a second OpenSearch node it no longer needs; check usage before the renewal on {day}.", false},
	{nsPriya, []string{"hiring"}, "Priya is hiring a second SRE for the platform rotation; {person} is on the interview loop.", false},
	{nsDigest, []string{"digest", "trends"}, "Digest note: memory writes under team:acme/agent:support doubled in {month}, mostly from {topic} tickets.", false},
	{nsRoot, []string{"company"}, "The all-hands is on the first {weekday} of each month at 15:00 CET.", false},
}

var (
	secrets     = []string{"Stripe API key", "database password", "webhook signing secret", "JWT signing key", "SMTP password", "OpenSearch admin password"}
	languages   = []string{"German", "French", "Spanish", "Japanese", "Portuguese", "Italian"}
	topics      = []string{"failed card payments", "VAT ids on invoices", "SSO login loops", "proration after plan changes", "missing receipt emails", "CSV exports timing out", "duplicate webhooks"}
	idps        = []string{"Okta", "Azure AD", "Google Workspace", "OneLogin", "JumpCloud"}
	currencies  = []string{"EUR", "USD", "GBP", "JPY", "CHF", "SEK"}
	monthsNames = []string{"January", "February", "March", "April", "May", "June"}
	// evidenceByNamespace says where each agent's learnings come from.
	evidenceByNamespace = map[string][]string{
		nsSupport.String(): {"thread {thread}, turns {t0}-{t1}", "ticket SUP-{pr}", "seen in {n} support chats in {month}",
			"escalation call with {customer} on {day}", "knowledge-base review on {day}"},
		nsPriya.String(): {"Priya's review comment on PR #{pr} in {repo}", "1:1 with Priya on {day}", "Priya in a Slack DM, {day}",
			"design doc review on {day}", "Priya's planning notes, {month}"},
		nsWriter.String(): {"review of the {month} release notes by {person}", "handbook/writing.md", "feedback from {customer} on {day}",
			"thread {thread}, turns {t0}-{t1}"},
		nsResearcher.String(): {"postmortem of {incident}", "benchmark run on {day}", "vendor docs read on {day}",
			"thread {thread}, turns {t0}-{t1}", "Grafana dashboard '{service}', {month}"},
		nsScout.String():  {"{repo}@{short}: CODEOWNERS", "{repo}@{short}: go.mod", "grep over {repo} at {short}"},
		nsDigest.String(): {"digest of {day}", "digest of the week of {day}"},
		nsTeam.String(): {"PR #{pr} in {repo}", "postmortem of {incident}", "Slack #{oncall}, {day}", "platform sync on {day}",
			"{person}'s review comment on PR #{pr}", "{repo}@{short}: README.md"},
		nsRoot.String(): {"handbook, imported {day}", "all-hands on {day}"},
	}
)

// learning builds one learning of kind from its templates.
func (g *gen) learning(kind contract.LearningKind) contract.StoreItem {
	var tpls []learningTemplate
	lo, hi := 0.6, 0.95
	switch kind {
	case contract.LearningPreference:
		tpls, lo, hi = preferenceTemplates, 0.55, 0.95
	case contract.LearningFact:
		tpls, lo, hi = factTemplates, 0.7, 0.99
	case contract.LearningProcedure:
		tpls, lo, hi = procedureTemplates, 0.75, 0.98
	case contract.LearningCorrection:
		tpls, lo, hi = correctionTemplates, 0.85, 1.0
	default:
		tpls, lo, hi = otherTemplates, 0.3, 0.7
	}
	t := pick(g, tpls)
	// Threads in evidence are named the way the learning agent's runtime names them.
	vars := append([]string{"{thread}", g.threadID(agentOf(t.ns))}, g.vars()...)
	text := fill(t.text, vars...)
	at := g.observed()
	meta := contract.MemoryMeta{Namespace: t.ns, Tags: tagsOf(t.tags), ObservedAt: &at}
	agent := agentOf(t.ns)
	if agent != "" {
		meta.AgentID = ptr(agent)
	}
	switch {
	case g.chance(0.35):
		thread := g.threadID(agent)
		if agent == "nightly-digest" {
			thread = "digest-" + dayString(at)
		}
		meta.ThreadID = ptr(thread)
		meta.Source = contract.SourceRef{Kind: contract.SourceConversation, ID: ptr(thread)}
		first := uint32(g.between(0, 12))
		meta.Turns = &contract.TurnRange{First: first, Last: first + uint32(g.between(1, 5))}
	case g.chance(0.15):
		channels := []string{"slack:#payments", "slack:#platform", "jira:ACME", "linear:WEB"}
		if t.ns.Equal(nsSupport) {
			channels = []string{"slack:#support-escalations", "jira:SUP"}
		}
		meta.Source = contract.SourceRef{Kind: contract.SourceComposio, ID: ptr(pick(g, channels))}
	case agent != "":
		meta.Source = contract.SourceRef{Kind: contract.SourceAgent, ID: ptr(agent)}
	default:
		meta.Source = contract.SourceRef{Kind: contract.SourceAgent}
	}
	if t.fromPerson {
		p := personIn(text)
		meta.ObservedActor = &contract.ObservedActor{ID: "u-" + p.id, Name: ptr(p.name)}
	}
	if g.chance(0.4) {
		meta.Workspace = ptr(workspaceOf(t.ns))
	}
	if g.chance(0.2) {
		meta.Tags = tagsOf(meta.Tags, pick(g, []string{"q1-2026", "q2-2026", "needs-review", "verified", "pinned"}))
	}
	it := contract.Learning(text, kind, g.confidence(lo, hi), meta)
	if kind != contract.LearningOther || g.chance(0.5) {
		it.Evidence = ptr(fill(pick(g, evidenceByNamespace[t.ns.String()]), vars...))
	}
	return it
}

// vars draws one consistent set of placeholder values.
func (g *gen) vars() []string {
	p := pick(g, people)
	p2 := pick(g, people)
	for p2.id == p.id {
		p2 = pick(g, people)
	}
	// Learnings talk about the running services (the ones with a latency budget).
	running := services[:6]
	s := pick(g, running)
	s2 := pick(g, running)
	for s2.name == s.name {
		s2 = pick(g, running)
	}
	e := pick(g, entities)
	wd := g.r.IntN(len(weekdays))
	wd2 := (wd + 1 + g.r.IntN(len(weekdays)-1)) % len(weekdays)
	n := g.between(3, 48)
	m := n + g.between(2, 20)
	day := g.observed()
	terms := []string{"30", "45", "60"}
	ti := g.r.IntN(3)
	secret := pick(g, secrets)
	t0 := g.between(0, 14)
	retries := g.between(3, 8)
	pg := services[g.r.IntN(2)] // billing-api and ledger run on Postgres
	return []string{
		"{pgstore}", pg.store, "{pgservice}", pg.name,
		"{retries2}", fmt.Sprint(retries + g.between(2, 6)), "{retries}", fmt.Sprint(retries),
		"{replicas}", fmt.Sprint(g.between(3, 12)), "{conns}", fmt.Sprint(100 * g.between(2, 5)),
		"{person2}", p2.name, "{person}", p.name, "{role}", p.role,
		"{service2}", s2.name, "{service}", s.name, "{repo}", s.repo, "{store}", s.store, "{desc}", s.desc,
		"{p99}", fmt.Sprint(s.p99), "{oncall}", s.oncall, "{svc}", strings.ReplaceAll(s.name, "-", "_"),
		"{weekday2}", weekdays[wd2], "{weekday}", weekdays[wd],
		"{customer}", pick(g, customers), "{cname}", pick(g, customerNames),
		"{entities}", e.many, "{entity}", e.one,
		"{n}", fmt.Sprint(n), "{m}", fmt.Sprint(m), "{pr}", fmt.Sprint(pr(g)), "{ticket}", ticket(g),
		"{incident}", incident(g), "{daycompact}", day.Format("0102"), "{day}", dayString(day),
		"{month}", pick(g, monthsNames), "{secretslug}", strings.ReplaceAll(strings.ToLower(secret), " ", "-"),
		"{secret}", secret, "{language}", pick(g, languages), "{topic}", pick(g, topics),
		"{idp}", pick(g, idps), "{currency}", pick(g, currencies),
		"{terms2}", terms[(ti+1)%3], "{terms}", terms[ti],
		"{major}", fmt.Sprint(g.between(1, 4)), "{minor}", fmt.Sprint(g.between(0, 30)), "{patch}", fmt.Sprint(g.between(0, 9)),
		"{thread}", g.threadID(""), "{t0}", fmt.Sprint(t0), "{t1}", fmt.Sprint(t0 + g.between(1, 4)),
		"{short}", g.commit()[:7],
	}
}

func workspaceOf(ns contract.Namespace) string {
	switch {
	case ns.Equal(nsSupport):
		return "acme-support"
	case ns.Equal(nsWriter):
		return "acme-docs"
	case ns.Equal(nsPriya):
		return "priya-notes"
	}
	return "acme-platform"
}

func agentOf(ns contract.Namespace) string {
	segs := ns.Segments()
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].Kind == contract.SegAgent {
			return segs[i].ID
		}
		if segs[i].Kind == contract.SegService {
			return segs[i].ID
		}
	}
	return ""
}

func personIn(text string) person {
	for _, p := range people {
		if strings.Contains(text, p.name) || strings.HasPrefix(text, strings.Split(p.name, " ")[0]) {
			return p
		}
	}
	return people[0]
}

// threadID names a conversation thread the way each agent's runtime does.
func (g *gen) threadID(agent string) string {
	switch agent {
	case "support":
		return fmt.Sprintf("sup-%04d", g.between(100, 999))
	case "researcher", "scout":
		return fmt.Sprintf("res-%03d", g.between(10, 199))
	case "writer":
		return fmt.Sprintf("wr-%03d", g.between(10, 199))
	case "nightly-digest":
		return fmt.Sprintf("digest-%s", dayString(g.observed()))
	}
	return fmt.Sprintf("thr-%05d", g.between(1000, 99999))
}
