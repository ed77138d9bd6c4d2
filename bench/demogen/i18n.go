package main

import (
	"fmt"
	"time"

	"mnemo/contract"
)

// kbArticles are knowledge-base articles in the five languages support answers in.
var kbArticles = []struct {
	slug string
	text map[string][2]string // language -> title, body
}{
	{"update-payment-method", map[string][2]string{
		"en": {"Update your payment method", "Go to Billing > Payment methods, choose Add card and confirm with your bank if it asks (3-D Secure). The new card becomes the default for the next invoice; open invoices are retried with it within an hour."},
		"de": {"Zahlungsmethode ändern", "Öffnen Sie Abrechnung > Zahlungsmethoden, wählen Sie Karte hinzufügen und bestätigen Sie die Zahlung bei Ihrer Bank, falls sie danach fragt (3-D Secure). Die neue Karte gilt ab der nächsten Rechnung; offene Rechnungen werden innerhalb einer Stunde erneut belastet."},
		"fr": {"Modifier votre moyen de paiement", "Allez dans Facturation > Moyens de paiement, choisissez Ajouter une carte et confirmez auprès de votre banque si elle le demande (3-D Secure). La nouvelle carte devient la carte par défaut ; les factures ouvertes sont de nouveau débitées dans l'heure."},
		"es": {"Cambiar el método de pago", "Ve a Facturación > Métodos de pago, elige Añadir tarjeta y confirma con tu banco si te lo pide (3-D Secure). La nueva tarjeta será la predeterminada para la próxima factura; las facturas pendientes se vuelven a cobrar en menos de una hora."},
		"ja": {"お支払い方法の変更", "「請求」>「お支払い方法」を開き、「カードを追加」を選んでください。カード会社から確認を求められた場合は承認してください（3-Dセキュア）。新しいカードは次回の請求から使われ、未払いの請求書は1時間以内に再請求されます。"},
	}},
	{"download-invoices", map[string][2]string{
		"en": {"Download invoices and credit notes", "Every invoice and credit note is available as PDF under Billing > Invoices. To export many at once, use Export CSV; the export covers the last 24 months and arrives by email within a few minutes."},
		"de": {"Rechnungen und Gutschriften herunterladen", "Jede Rechnung und Gutschrift finden Sie als PDF unter Abrechnung > Rechnungen. Für viele Dokumente auf einmal nutzen Sie CSV exportieren; der Export umfasst die letzten 24 Monate und kommt innerhalb weniger Minuten per E-Mail."},
		"fr": {"Télécharger factures et avoirs", "Chaque facture et chaque avoir est disponible en PDF dans Facturation > Factures. Pour en exporter plusieurs, utilisez Exporter en CSV ; l'export couvre les 24 derniers mois et arrive par e-mail en quelques minutes."},
		"es": {"Descargar facturas y notas de crédito", "Todas las facturas y notas de crédito están en PDF en Facturación > Facturas. Para exportar muchas a la vez, usa Exportar CSV; la exportación cubre los últimos 24 meses y llega por correo en pocos minutos."},
		"ja": {"請求書とクレジットノートのダウンロード", "すべての請求書とクレジットノートは「請求」>「請求書」からPDFでダウンロードできます。まとめて取得する場合は「CSVをエクスポート」を使ってください。過去24か月分が数分以内にメールで届きます。"},
	}},
	{"vat-id", map[string][2]string{
		"en": {"Add your VAT number to invoices", "Enter your VAT number under Settings > Company. We check it against VIES; once valid, new invoices show it and apply the reverse charge where the law requires. Past invoices are not changed; ask support for a corrected copy."},
		"de": {"USt-IdNr. auf Rechnungen angeben", "Tragen Sie Ihre Umsatzsteuer-Identifikationsnummer unter Einstellungen > Unternehmen ein. Wir prüfen sie über VIES; danach erscheint sie auf neuen Rechnungen, und wo vorgeschrieben gilt das Reverse-Charge-Verfahren. Frühere Rechnungen bleiben unverändert."},
		"fr": {"Ajouter votre numéro de TVA", "Saisissez votre numéro de TVA intracommunautaire dans Paramètres > Entreprise. Nous le vérifions dans VIES ; ensuite il figure sur les nouvelles factures et l'autoliquidation s'applique lorsque la loi l'exige. Les factures passées ne changent pas."},
		"es": {"Añadir tu NIF-IVA a las facturas", "Introduce tu número de IVA en Ajustes > Empresa. Lo comprobamos en VIES; una vez válido, aparece en las facturas nuevas y se aplica la inversión del sujeto pasivo cuando la ley lo exige. Las facturas anteriores no cambian."},
		"ja": {"請求書への適格請求書発行事業者番号の記載", "「設定」>「会社情報」で登録番号を入力してください。確認が済むと、新しい請求書に番号が記載されます。過去の請求書は変更されませんので、修正版が必要な場合はサポートにご連絡ください。"},
	}},
	{"failed-payment", map[string][2]string{
		"en": {"Why did my payment fail?", "Most failed payments are soft declines: the bank asks for confirmation or the card has a limit. We retry on days 1, 3, 5 and 7. You can retry at once from the invoice page after updating the card. Your service is not interrupted during the retries."},
		"de": {"Warum ist meine Zahlung fehlgeschlagen?", "Meist handelt es sich um eine vorläufige Ablehnung: Die Bank verlangt eine Bestätigung oder das Kartenlimit ist erreicht. Wir versuchen es an den Tagen 1, 3, 5 und 7 erneut. Ihr Zugang bleibt währenddessen bestehen."},
		"fr": {"Pourquoi mon paiement a-t-il échoué ?", "La plupart des échecs sont des refus temporaires : la banque demande une confirmation ou le plafond de la carte est atteint. Nous réessayons les jours 1, 3, 5 et 7. Votre service n'est pas interrompu pendant ce temps."},
		"es": {"¿Por qué falló mi pago?", "La mayoría de los pagos fallidos son rechazos temporales: el banco pide una confirmación o la tarjeta tiene un límite. Reintentamos los días 1, 3, 5 y 7. Tu servicio no se interrumpe durante los reintentos."},
		"ja": {"支払いが失敗したのはなぜですか", "多くの場合、一時的な拒否です。カード会社が本人確認を求めているか、利用限度額に達しています。1日目、3日目、5日目、7日目に再請求します。再請求の間もサービスは停止しません。"},
	}},
	{"sso-setup", map[string][2]string{
		"en": {"Set up single sign-on", "Enterprise plans can sign in with SAML or OIDC. Send your IdP metadata URL to support; we configure the tenant within one business day. Keep one admin with a password login until SSO works for everyone."},
		"de": {"Single Sign-On einrichten", "Im Enterprise-Tarif ist die Anmeldung über SAML oder OIDC möglich. Senden Sie die Metadaten-URL Ihres Identity Providers an den Support; wir richten den Mandanten innerhalb eines Werktags ein."},
		"fr": {"Configurer l'authentification unique", "Les offres Enterprise peuvent se connecter via SAML ou OIDC. Envoyez l'URL des métadonnées de votre fournisseur d'identité au support ; nous configurons le tenant en un jour ouvré."},
		"es": {"Configurar el inicio de sesión único", "Los planes Enterprise pueden iniciar sesión con SAML u OIDC. Envía la URL de metadatos de tu proveedor de identidad a soporte; configuramos el tenant en un día laborable."},
		"ja": {"シングルサインオンの設定", "エンタープライズプランではSAMLまたはOIDCでサインインできます。IdPのメタデータURLをサポートにお送りください。1営業日以内にテナントを設定します。"},
	}},
	{"cancel-subscription", map[string][2]string{
		"en": {"Cancel a subscription", "Cancel from Billing > Subscriptions. The subscription stays active until the end of the paid period and is not renewed. Annual plans are not refunded pro rata unless your contract says so."},
		"de": {"Abonnement kündigen", "Kündigen Sie unter Abrechnung > Abonnements. Das Abonnement bleibt bis zum Ende des bezahlten Zeitraums aktiv und wird nicht verlängert. Jahrespläne werden nicht anteilig erstattet, sofern Ihr Vertrag nichts anderes vorsieht."},
		"fr": {"Résilier un abonnement", "Résiliez depuis Facturation > Abonnements. L'abonnement reste actif jusqu'à la fin de la période payée et n'est pas renouvelé. Les forfaits annuels ne sont pas remboursés au prorata, sauf mention contraire du contrat."},
		"es": {"Cancelar una suscripción", "Cancela desde Facturación > Suscripciones. La suscripción sigue activa hasta el final del periodo pagado y no se renueva. Los planes anuales no se reembolsan de forma prorrateada salvo que tu contrato lo indique."},
		"ja": {"サブスクリプションの解約", "「請求」>「サブスクリプション」から解約できます。支払い済みの期間の終わりまで利用でき、その後は更新されません。年間プランは契約に定めがない限り日割りで返金されません。"},
	}},
}

var releaseLines = map[string][]string{
	"en": {"Invoices can now be downloaded in bulk as a ZIP.", "The customer portal shows the ledger balance per currency.", "Webhooks carry an idempotency key in the Acme-Idempotency-Key header.", "Failed payments can be retried from the invoice page.", "SSO metadata is refreshed every hour.", "CSV exports include credit notes."},
	"de": {"Rechnungen lassen sich jetzt gesammelt als ZIP herunterladen.", "Das Kundenportal zeigt den Kontostand je Währung.", "Webhooks enthalten einen Idempotenzschlüssel im Header Acme-Idempotency-Key.", "Fehlgeschlagene Zahlungen können auf der Rechnungsseite erneut ausgelöst werden.", "SSO-Metadaten werden stündlich aktualisiert.", "CSV-Exporte enthalten Gutschriften."},
	"fr": {"Les factures peuvent être téléchargées en lot au format ZIP.", "Le portail client affiche le solde par devise.", "Les webhooks portent une clé d'idempotence dans l'en-tête Acme-Idempotency-Key.", "Les paiements échoués peuvent être relancés depuis la page de la facture.", "Les métadonnées SSO sont actualisées toutes les heures.", "Les exports CSV incluent les avoirs."},
	"es": {"Las facturas se pueden descargar en bloque como ZIP.", "El portal de clientes muestra el saldo por moneda.", "Los webhooks llevan una clave de idempotencia en la cabecera Acme-Idempotency-Key.", "Los pagos fallidos se pueden reintentar desde la página de la factura.", "Los metadatos de SSO se actualizan cada hora.", "Las exportaciones CSV incluyen notas de crédito."},
	"ja": {"請求書をZIPでまとめてダウンロードできるようになりました。", "カスタマーポータルに通貨ごとの残高が表示されます。", "WebhookのAcme-Idempotency-Keyヘッダーに冪等キーが含まれます。", "失敗した支払いを請求書ページから再試行できます。", "SSOメタデータは1時間ごとに更新されます。", "CSVエクスポートにクレジットノートが含まれます。"},
}

var releaseTitle = map[string]string{
	"en": "Release notes %s", "de": "Versionshinweise %s", "fr": "Notes de version %s", "es": "Notas de la versión %s", "ja": "リリースノート %s",
}

// localisedDocs returns the knowledge base and the monthly release notes in every language.
func (g *gen) localisedDocs() []contract.StoreItem {
	langs := []string{"en", "de", "fr", "es", "ja"}
	var out []contract.StoreItem
	for _, a := range kbArticles {
		for _, l := range langs {
			tb := a.text[l]
			at := g.observed()
			path := fmt.Sprintf("kb/%s/%s.md", l, a.slug)
			out = append(out, contract.StoreItem{
				Type: contract.KindDocument, Title: ptr(tb[0]), Body: contract.TextBody(tb[1]), Mime: ptr(markdown),
				Meta: contract.MemoryMeta{
					Namespace: nsSupport, Workspace: ptr("acme-support"), Folder: ptr("kb/" + l), FilePath: ptr(path),
					Language: ptr(l), URL: ptr("https://help.acme.dev/" + l + "/" + a.slug),
					Source: contract.SourceRef{Kind: contract.SourceLink, ID: ptr("https://help.acme.dev/" + l + "/" + a.slug)},
					Tags:   []string{"knowledge-base", "customer"}, ObservedAt: &at,
				},
			})
		}
	}
	for month := 1; month <= 6; month++ {
		day := time.Date(2026, time.Month(month), 20+month%5, 14, 0, 0, 0, time.UTC)
		version := fmt.Sprintf("2026.%02d", month)
		for _, l := range langs {
			lines := releaseLines[l]
			body := "## " + fmt.Sprintf(releaseTitle[l], version) + "\n\n"
			for i := 0; i < 3; i++ {
				body += "- " + lines[(month+i*2)%len(lines)] + "\n"
			}
			at := day
			if l == "fr" || l == "es" {
				at = day.AddDate(0, 0, 1)
			}
			out = append(out, contract.StoreItem{
				Type: contract.KindDocument, Title: ptr(fmt.Sprintf(releaseTitle[l], version)), Body: contract.TextBody(body), Mime: ptr(markdown),
				Meta: contract.MemoryMeta{
					Namespace: nsWriter, Workspace: ptr("acme-docs"), Folder: ptr("release-notes/" + l),
					FilePath: ptr(fmt.Sprintf("release-notes/%s/%s.md", l, version)), Language: ptr(l), AgentID: ptr("writer"),
					Source: contract.SourceRef{Kind: contract.SourceAgent, ID: ptr("writer")},
					Tags:   []string{"release-notes", "i18n"}, ObservedAt: &at,
				},
			})
		}
	}
	return out
}

// webDocs are pages the agents read on the web, feed entries and messages
// pulled in through connectors.
func (g *gen) webDocs() []contract.StoreItem {
	var out []contract.StoreItem
	links := []struct{ url, title, summary string }{
		{"https://www.postgresql.org/docs/16/logical-replication-restrictions.html", "Logical replication restrictions (Postgres 16)", "Sequence data is not replicated; the sequence values on the subscriber must be set before switching over. DDL is not replicated either."},
		{"https://opensearch.org/docs/latest/api-reference/index-apis/update-settings/", "OpenSearch: update index settings", "refresh_interval can be changed on a live index; -1 disables refresh, useful for bulk loads, and must be restored afterwards."},
		{"https://go.dev/doc/go1.26", "Go 1.26 release notes", "The new garbage collector is on by default and reduces GC overhead for allocation-heavy services; new(expr) is allowed."},
		{"https://datatracker.ietf.org/doc/html/rfc9457", "RFC 9457: Problem Details for HTTP APIs", "Defines application/problem+json with type, title, status, detail and instance; obsoletes RFC 7807."},
		{"https://stripe.com/docs/declines/codes", "Card decline codes", "Soft declines (insufficient_funds, do_not_honor) may succeed on retry; hard declines (stolen_card, lost_card) must not be retried."},
		{"https://www.sqlite.org/wal.html", "SQLite write-ahead logging", "WAL lets readers run concurrently with one writer; checkpoints move pages back to the database file."},
		{"https://etcd.io/docs/v3.5/learning/data_model/", "etcd data model (bbolt)", "etcd stores its key space in bbolt, a B+tree with copy-on-write pages and a single writer."},
		{"https://blevesearch.com/docs/Scoring/", "Bleve scoring", "Bleve scores with BM25 in scorch indexes; field boosts and query boosts multiply the score."},
		{"https://ec.europa.eu/taxation_customs/vies/", "VIES VAT number validation", "The EU's service to check a VAT number; it can be unavailable for member states at night, so checks must be retried."},
		{"https://martinfowler.com/articles/patterns-of-distributed-systems/", "Patterns of distributed systems", "Write-ahead log, idempotent receiver, and the transactional outbox, with examples."},
		{"https://sre.google/sre-book/postmortem-culture/", "Postmortem culture", "Blameless postmortems focus on contributing causes and follow-up actions with owners."},
		{"https://www.rfc-editor.org/rfc/rfc6749", "RFC 6749: OAuth 2.0", "Authorization code grant, refresh tokens, and the token endpoint's error responses."},
	}
	for _, l := range links {
		at := g.observed()
		ns := pick(g, []contract.Namespace{nsResearcher, nsResearcher, nsScout, nsPriya})
		meta := contract.MemoryMeta{Namespace: ns, URL: ptr(l.url), Language: ptr("en"), ObservedAt: &at,
			Source: contract.SourceRef{Kind: contract.SourceLink, ID: ptr(l.url)}, Tags: []string{"reading", "research"}}
		if agent := agentOf(ns); agent != "" {
			meta.AgentID = ptr(agent)
			meta.ToolCall = &contract.ToolCallRef{Name: "read_url", ID: ptr(fmt.Sprintf("call-%06d", g.between(1, 999999)))}
		}
		out = append(out, contract.StoreItem{Type: contract.KindDocument, Title: ptr(l.title), Body: contract.TextBody(l.summary), Meta: meta})
	}
	feeds := []struct{ feed, title, text string }{
		{"https://go.dev/blog/feed.atom", "Go 1.26 is released", "The Go team released Go 1.26 with the new garbage collector on by default and faster cgo calls."},
		{"https://go.dev/blog/feed.atom", "Testing time with testing/synctest", "synctest runs code in a bubble with a fake clock, so tests of timeouts do not sleep."},
		{"https://www.postgresql.org/news.rss", "PostgreSQL 16.6 and 17.2 released", "Security fixes for row-level security and a fix for a rare index corruption during concurrent reindex."},
		{"https://www.postgresql.org/news.rss", "PostgreSQL 18 beta", "Asynchronous I/O, virtual generated columns and OAuth authentication."},
		{"https://blog.rust-lang.org/feed.xml", "Announcing Rust 1.90", "Faster linking by default on Linux and stabilised let chains."},
		{"https://opensearch.org/blog/feed.xml", "OpenSearch 2.13", "Concurrent segment search is generally available; improves p99 on large indices."},
		{"https://status.acme-psp.example/feed.rss", "Degraded card authorisations in EU", "Elevated soft declines for Visa cards issued in Germany between 13:05 and 13:50 UTC."},
		{"https://status.acme-psp.example/feed.rss", "Scheduled maintenance of the payouts API", "Payouts are delayed by up to two hours during the maintenance window on Sunday 02:00-04:00 UTC."},
		{"https://github.blog/changelog/feed/", "Dependabot grouped updates for Go", "Dependabot can group Go module updates into one pull request per directory."},
		{"https://hacks.mozilla.org/feed/", "Intl.DurationFormat ships", "Formats durations in the user's locale, useful for 'retry in 3 days' messages."},
	}
	for _, f := range feeds {
		at := g.observed()
		out = append(out, contract.StoreItem{Type: contract.KindDocument, Title: ptr(f.title), Body: contract.TextBody(f.text),
			Meta: contract.MemoryMeta{Namespace: nsDigest, Language: ptr("en"), ObservedAt: &at, AgentID: ptr("nightly-digest"),
				Source: contract.SourceRef{Kind: contract.SourceRSS, ID: ptr(f.feed)}, Tags: []string{"feed", "news"}}})
	}
	// Messages pulled in through the Composio connectors (Slack, Jira, Linear, Gmail).
	slack := []string{
		"heads up: billing-db failover test tonight at 22:00 UTC, expect 30 s of write errors",
		"who owns the dunning email copy? a customer says the German version says 'Mahnung' which sounds harsh",
		"notifier dead-letter stream is at {n} again, looking",
		"reminder: freeze for the quarter close starts Thursday 18:00 UTC",
		"checkout-web canary looks good, promoting",
		"can someone review {ticket}? it touches the ledger so it needs two approvals",
		"the VAT sync failed last night, VIES was down for DE; rerun at 09:00 worked",
		"search-indexer backfill for {entities} done, {n}k docs, no lag",
	}
	jira := []string{
		"{ticket}: Invoice PDF shows wrong VAT id when billing address override is set",
		"{ticket}: Add CSV export of credit notes",
		"{ticket}: Proration for seats added mid-cycle",
		"{ticket}: Retry button on failed invoices does nothing in Safari 17",
		"{ticket}: Webhook signature docs have the wrong header name",
		"{ticket}: Reduce dunning emails to one per week for annual plans",
	}
	for i := 0; i < 36; i++ {
		at := g.observed()
		var text, id, ws string
		var tags []string
		switch i % 3 {
		case 0, 1:
			ch := pick(g, []string{"#payments", "#platform", "#support-escalations", "#incidents"})
			text, id, ws, tags = pick(g, slack), "slack:"+ch, "acme-slack", []string{"slack", "chat"}
		default:
			text, id, ws, tags = pick(g, jira), "jira:ACME", "acme-jira", []string{"jira", "ticket"}
		}
		e := pick(g, entities)
		text = fill(text, "{n}", fmt.Sprint(g.between(2, 90)), "{ticket}", ticket(g), "{entities}", e.many)
		author := pick(g, people)
		meta := contract.MemoryMeta{Namespace: pick(g, []contract.Namespace{nsTeam, nsSupport, nsDigest}), Workspace: ptr(ws),
			Source: contract.SourceRef{Kind: contract.SourceComposio, ID: ptr(id)}, Tags: tags, ObservedAt: &at,
			ObservedActor: &contract.ObservedActor{ID: "u-" + author.id, Name: ptr(author.name)}}
		body := author.name + ": " + text
		out = append(out, contract.StoreItem{Type: contract.KindDocument, Body: contract.TextBody(body), Meta: meta})
	}
	// Files Priya dropped into her own space.
	files := []struct{ path, title, body string }{
		{"/home/priya/Documents/q2-planning.md", "Q2 planning", "# Q2 planning\n\n## Goals\n\n1. Proration v2 for monthly plans\n2. Multi-currency payouts (GBP, CHF)\n3. Support agent memory with review queue\n\n## Not this quarter\n\n- Postgres 17\n- New pricing page\n"},
		{"/home/priya/Documents/1-1-notes-marco.md", "1:1 notes with Marco", "- Marco wants to own the Postgres upgrade end to end\n- Pager load: 3 night pages in May, all notifier\n- Next: conference talk proposal on the outbox migration\n"},
		{"/home/priya/Documents/hiring-sre.md", "SRE hiring loop", "# SRE hiring loop\n\n| stage | who | focus |\n|---|---|---|\n| screen | Priya | motivation, on-call experience |\n| systems | Marco | debugging a slow Postgres |\n| coding | Lena | Go, tests |\n| values | Sofía | working with support |\n"},
		{"/home/priya/Documents/reading-list.txt", "Reading list", "Designing Data-Intensive Applications (2nd ed.), ch. 7 on transactions\nThe outbox pattern article from the platform sync\nRFC 9457 for our API errors\n"},
	}
	for _, f := range files {
		at := g.observed()
		mime := markdown
		if f.path[len(f.path)-4:] == ".txt" {
			mime = "text/plain"
		}
		out = append(out, contract.StoreItem{Type: contract.KindDocument, Title: ptr(f.title), Body: contract.TextBody(f.body), Mime: ptr(mime),
			Meta: contract.MemoryMeta{Namespace: nsPriya, Workspace: ptr("priya-notes"), FilePath: ptr(f.path),
				Folder: ptr("/home/priya/Documents"), Language: ptr("en"), ObservedAt: &at,
				Source: contract.SourceRef{Kind: contract.SourceFile, ID: ptr(f.path)}, Tags: []string{"personal", "planning"}}})
	}
	return out
}
