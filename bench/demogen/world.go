package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"mnemo/contract"
)

// The demo world: Acme, a small company running a subscription-billing
// product, and the agents that help its engineers and support staff. Every
// name below is fictional.

type person struct {
	id, name, role, lang string
}

var people = []person{
	{"priya", "Priya Raman", "engineering lead", "en"},
	{"marco", "Marco Rossi", "SRE", "en"},
	{"lena", "Lena Vogel", "backend engineer", "de"},
	{"kenji", "Kenji Watanabe", "frontend engineer", "ja"},
	{"sofia", "Sofía Herrera", "support lead", "es"},
	{"amelie", "Amélie Laurent", "product manager", "fr"},
	{"dmitri", "Dmitri Volkov", "data engineer", "en"},
	{"grace", "Grace Okafor", "security engineer", "en"},
}

type service struct {
	name, repo, lang, desc, store, oncall string
	p99                                   int
}

var services = []service{
	{"billing-api", "acme/billing-api", "go", "issues invoices and charges cards", "Postgres 16 (billing-db)", "payments", 250},
	{"ledger", "acme/ledger", "rust", "keeps the double-entry ledger of every money movement", "Postgres 16 (ledger-db)", "payments", 120},
	{"checkout-web", "acme/checkout-web", "typescript", "serves the hosted checkout and the customer portal", "none (talks to billing-api)", "web", 400},
	{"search-indexer", "acme/search-indexer", "python", "indexes invoices and customers into OpenSearch", "OpenSearch 2.13", "platform", 900},
	{"notifier", "acme/notifier", "go", "sends receipts, dunning emails and webhooks", "Redis 7 streams", "platform", 300},
	{"auth-gateway", "acme/auth-gateway", "go", "terminates OAuth and SSO and issues session tokens", "Redis 7 (sessions)", "security", 80},
	{"warehouse", "acme/warehouse", "sql", "builds the finance and product dashboards with dbt", "BigQuery", "data", 0},
	{"infra", "acme/infra", "shell", "holds the Terraform, Helm charts and deploy scripts", "none", "platform", 0},
}

var customers = []string{"Northwind Traders", "Globex", "Initech", "Umbrella Health", "Stark Logistics", "Wayne Foods",
	"Hooli", "Vandelay Imports", "Soylent Labs", "Cyberdyne Retail", "Tyrell Analytics", "Wonka Confections",
	"Pied Piper", "Acme Anvils GmbH", "Bluth Homes", "Dunder Paper", "Gringotts Exchange", "Oceanic Air",
	"Massive Dynamic", "Prestige Worldwide"}

var customerNames = []string{"Tomás Ortega", "Hannah Becker", "Olivia Chen", "Rahul Mehta", "Claire Dubois",
	"Yuki Tanaka", "Jonas Lindqvist", "Aisha Bello", "Miguel Santos", "Emma Wilson", "Noah Fischer",
	"Chloé Martin", "Lucas Moreau", "Sara Conti", "Ben Adler", "Mei Ling", "Diego Ramírez", "Fatima Zahra"}

var entities = []entity{
	{"invoice", "invoices", "Invoice"},
	{"payment", "payments", "Payment"},
	{"refund", "refunds", "Refund"},
	{"customer", "customers", "Customer"},
	{"subscription", "subscriptions", "Subscription"},
	{"webhook", "webhooks", "Webhook"},
	{"coupon", "coupons", "Coupon"},
	{"payout", "payouts", "Payout"},
	{"credit_note", "credit_notes", "CreditNote"},
	{"tax_rate", "tax_rates", "TaxRate"},
}

type entity struct{ one, many, camel string }

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}

// The namespaces of the demo, by the role they play.
var (
	nsRoot       = contract.Root()
	nsTeam       = contract.MustNamespace("team:acme")
	nsWriter     = contract.MustNamespace("team:acme/agent:writer")
	nsResearcher = contract.MustNamespace("team:acme/agent:researcher")
	nsSupport    = contract.MustNamespace("team:acme/agent:support")
	nsScout      = contract.MustNamespace("team:acme/agent:researcher/agent:scout")
	nsPriya      = contract.MustNamespace("user:priya")
	nsDigest     = contract.MustNamespace("team:acme/service:nightly-digest")
)

// gen carries the deterministic random source and the demo's clock.
type gen struct {
	r *rand.Rand
}

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, 0x6d6e656d6f))} }

func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

var (
	demoStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	demoEnd   = time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)
)

// observed returns an instant in the demo's six months, on working hours more
// often than not, with second precision like a real clock reading.
func (g *gen) observed() time.Time {
	span := int(demoEnd.Sub(demoStart) / (24 * time.Hour))
	day := demoStart.AddDate(0, 0, g.r.IntN(span))
	if day.Weekday() == time.Saturday || day.Weekday() == time.Sunday {
		if g.chance(0.7) {
			day = day.AddDate(0, 0, 2)
		}
	}
	hour := g.between(7, 19)
	if g.chance(0.1) {
		hour = g.r.IntN(24)
	}
	return day.Add(time.Duration(hour)*time.Hour + time.Duration(g.r.IntN(3600))*time.Second)
}

func (g *gen) commit() string {
	const hex = "0123456789abcdef"
	b := make([]byte, 40)
	for i := range b {
		b[i] = hex[g.r.IntN(16)]
	}
	return string(b)
}

func (g *gen) confidence(lo, hi float64) float32 {
	// Two decimals, as an agent would report it.
	c := lo + g.r.Float64()*(hi-lo)
	return float32(int(c*100+0.5)) / 100
}

func ptr(s string) *string { return &s }

func fill(tmpl string, pairs ...string) string { return strings.NewReplacer(pairs...).Replace(tmpl) }

func dayString(t time.Time) string { return t.Format("2006-01-02") }

func ticket(g *gen) string { return fmt.Sprintf("ACME-%d", g.between(1200, 4899)) }

func incident(g *gen) string { return fmt.Sprintf("INC-%d", g.between(2001, 2140)) }

func pr(g *gen) int { return g.between(310, 2480) }

func tagsOf(base []string, extra ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append(append([]string{}, base...), extra...) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
