package gatepost_test

// The client against a running Gatepost: GATEPOST_URL, GATEPOST_LIVE_KEY and
// GATEPOST_SANDBOX_KEY name it (sdk/go/go.sdk.test.ts starts one with an SMTP relay and sets
// them). Webhook deliveries reach this process's own HTTP server, so that Gatepost must let
// loopback through its SSRF guard (GATEPOST_WEBHOOK_ALLOW=127.0.0.0/8).

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	gatepost "github.com/gatepost/gatepost-go"
)

type env struct{ url, live, sandbox string }

func gatepostEnv(t *testing.T) env {
	t.Helper()
	e := env{os.Getenv("GATEPOST_URL"), os.Getenv("GATEPOST_LIVE_KEY"), os.Getenv("GATEPOST_SANDBOX_KEY")}
	if e.url == "" || e.live == "" || e.sandbox == "" {
		t.Fatal("set GATEPOST_URL, GATEPOST_LIVE_KEY and GATEPOST_SANDBOX_KEY to a running Gatepost and a tenant's keys")
	}
	return e
}

func clients(t *testing.T) (live, sandbox *gatepost.Client) {
	e := gatepostEnv(t)
	return gatepost.New(e.live, gatepost.WithBaseURL(e.url)), gatepost.New(e.sandbox, gatepost.WithBaseURL(e.url))
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func unique(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func wantCode(t *testing.T, err error, status int, code string) *gatepost.Error {
	t.Helper()
	var apiErr *gatepost.Error
	if !errors.As(err, &apiErr) || apiErr.Status != status || apiErr.Code != code {
		t.Fatalf("err %v; want %d %s", err, status, code)
	}
	return apiErr
}

func TestASandboxSendIsAcceptedThenOnItsTimeline(t *testing.T) {
	_, sandbox := clients(t)
	ctx := bounded(t)
	sent, err := sandbox.Send(ctx, gatepost.SendRequest{To: "ann@example.com", Subject: "Hello from Go", HTML: "<p>Hi {{name}}</p>", Data: map[string]any{"name": "Ann"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sent.ID, "msg_") || !sent.Sandbox || sent.Status != "queued" {
		t.Fatalf("send answered %+v", sent)
	}
	m, err := sandbox.WaitForEvent(ctx, sent.ID, "email.sent", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Hello from Go" || m.Event("message.accepted") == nil || m.Event("email.sent").Data["message_id"] != sent.ID {
		t.Fatalf("timeline %+v", m)
	}
	captured, err := sandbox.GetCaptured(ctx, sent.ID)
	if err != nil || !strings.Contains(captured.HTML, "Hi Ann") {
		t.Fatalf("captured %+v, %v", captured, err)
	}
}

func TestABadKeyIsTheTypedErrorWithItsCode(t *testing.T) {
	e := gatepostEnv(t)
	_, err := gatepost.New("gp_live_not_a_key_at_all", gatepost.WithBaseURL(e.url)).ListTemplates(bounded(t))
	wantCode(t, err, 401, "invalid_api_key")
}

func TestRefusalsCarryTheirCodes(t *testing.T) {
	_, sandbox := clients(t)
	ctx := bounded(t)
	_, err := sandbox.Send(ctx, gatepost.SendRequest{To: "ann@example.com", Template: unique("no-such-")})
	wantCode(t, err, 422, "template_not_found")
	_, err = sandbox.Send(ctx, gatepost.SendRequest{To: "not an address", Subject: "s", HTML: "<p>s</p>"})
	if apiErr := wantCode(t, err, 400, "invalid_request"); len(apiErr.Details) == 0 || apiErr.Details[0].Field != "to" {
		t.Fatalf("details %+v; want the field to", apiErr.Details)
	}
	// A sandbox key never manages: the scope refusal, not a bad key.
	_, err = sandbox.CreateTemplate(ctx, gatepost.TemplateCreate{Slug: unique("t-"), Subject: "s", HTML: "h"})
	wantCode(t, err, 403, "insufficient_scope")
}

func TestTheSameIdempotencyKeyGivesTheSameMessage(t *testing.T) {
	_, sandbox := clients(t)
	ctx := bounded(t)
	key := unique("go-idem-")
	email := gatepost.SendRequest{To: "ann@example.com", Subject: "once", HTML: "<p>once</p>"}
	first, err := sandbox.Send(ctx, email, gatepost.WithIdempotencyKey(key))
	if err != nil {
		t.Fatal(err)
	}
	again, err := sandbox.Send(ctx, email, gatepost.WithIdempotencyKey(key))
	if err != nil || again.ID != first.ID {
		t.Fatalf("again %+v, %v; want %s", again, err, first.ID)
	}
	// Another body under the same key is refused.
	_, err = sandbox.Send(ctx, gatepost.SendRequest{To: "bob@example.com", Subject: "other", HTML: "<p>o</p>"}, gatepost.WithIdempotencyKey(key))
	wantCode(t, err, 422, "idempotency_key_reused")
	m, err := sandbox.GetMessage(ctx, first.ID)
	if err != nil || m.IdempotencyKey == nil || *m.IdempotencyKey != key {
		t.Fatalf("message %+v, %v", m, err)
	}
}

func TestABatchAdmitsAndRefusesEachItemOnItsOwn(t *testing.T) {
	_, sandbox := clients(t)
	res, err := sandbox.SendBatch(bounded(t), []gatepost.SendRequest{
		{To: "ann@example.com", Subject: "one", HTML: "<p>1</p>"},
		{To: "bob@example.com", Template: unique("no-such-")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 1 || res.Refused != 1 || !strings.HasPrefix(res.Results[0].ID, "msg_") ||
		res.Results[1].Error == nil || res.Results[1].Error.Code != "template_not_found" {
		t.Fatalf("batch %+v", res)
	}
}

func TestTemplatesRoundTrip(t *testing.T) {
	live, sandbox := clients(t)
	ctx := bounded(t)
	slug := unique("welcome-")
	created, err := live.CreateTemplate(ctx, gatepost.TemplateCreate{Slug: slug, Subject: "Welcome {{name}}", HTML: "<p>Hello {{name}}</p>"})
	if err != nil || created.Slug != slug {
		t.Fatalf("create %+v, %v", created, err)
	}
	_, err = live.CreateTemplate(ctx, gatepost.TemplateCreate{Slug: slug, Subject: "s", HTML: "h"})
	wantCode(t, err, 409, "template_exists")
	updated, err := live.UpdateTemplate(ctx, slug, gatepost.TemplateUpdate{Subject: gatepost.String("Hi {{name}}")})
	if err != nil || updated.Subject != "Hi {{name}}" || updated.HTML != created.HTML {
		t.Fatalf("update %+v, %v", updated, err)
	}
	list, err := live.ListTemplates(ctx)
	if err != nil || !containsTemplate(list, slug) {
		t.Fatalf("list %+v, %v", list, err)
	}
	sent, err := sandbox.Send(ctx, gatepost.SendRequest{To: "ann@example.com", Template: slug, Data: map[string]any{"name": "Ann"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.GetMessage(ctx, sent.ID)
	if err != nil || m.Subject != "Hi Ann" {
		t.Fatalf("message %+v, %v", m, err)
	}
	if err := live.DeleteTemplate(ctx, slug); err != nil {
		t.Fatal(err)
	}
	_, err = live.GetTemplate(ctx, slug)
	wantCode(t, err, 404, "not_found")
}

func containsTemplate(list []gatepost.Template, slug string) bool {
	for _, t := range list {
		if t.Slug == slug {
			return true
		}
	}
	return false
}

func TestValidationAnswersVerdictsAndRefusesAnEmptyBatch(t *testing.T) {
	live, sandbox := clients(t)
	ctx := bounded(t)
	// The Gatepost under test asks DNS at a loopback port nothing listens on: a valid address is unknown.
	v, err := sandbox.Validate(ctx, "support@example.com")
	if err != nil || v.Result != "unknown" || strings.Join(v.Reasons, ",") != "dns_unavailable,role_account" ||
		!v.Checks.Syntax || v.Checks.MX != nil {
		t.Fatalf("validate %+v, %v", v, err)
	}
	results, err := live.ValidateBatch(ctx, []string{`"ann@example.com`, strings.Repeat("x", 300) + "@example.com"})
	if err != nil || len(results) != 2 ||
		results[0].Result != "undeliverable" || strings.Join(results[0].Reasons, ",") != "unpaired_quote" ||
		results[1].Result != "undeliverable" || strings.Join(results[1].Reasons, ",") != "address_too_long" {
		t.Fatalf("batch %+v, %v", results, err)
	}
	_, err = live.ValidateBatch(ctx, []string{})
	wantCode(t, err, 400, "invalid_request")
}

func TestSuppressionsRoundTripAndRefuseASend(t *testing.T) {
	live, sandbox := clients(t)
	ctx := bounded(t)
	address := unique("gone-") + "@example.com"
	s, err := live.Suppress(ctx, gatepost.SuppressionCreate{Address: address, Detail: "asked by phone"})
	if err != nil || s.Address != address || s.Reason != "manual" {
		t.Fatalf("suppress %+v, %v", s, err)
	}
	// The list is the recipients' index and follows within moments.
	deadline := time.Now().Add(10 * time.Second)
	for {
		page, err := live.ListSuppressions(ctx, gatepost.ListOptions{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if containsSuppression(page.Data, address) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listed: %+v", address, page.Data)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, err := live.GetSuppression(ctx, address)
	if err != nil || got.Detail == nil || *got.Detail != "asked by phone" {
		t.Fatalf("get %+v, %v", got, err)
	}
	_, err = sandbox.Send(ctx, gatepost.SendRequest{To: address, Subject: "s", HTML: "<p>s</p>"})
	wantCode(t, err, 422, "recipient_suppressed")
	if err := live.Unsuppress(ctx, address); err != nil {
		t.Fatal(err)
	}
	_, err = live.GetSuppression(ctx, address)
	wantCode(t, err, 404, "not_found")
}

func containsSuppression(list []gatepost.Suppression, address string) bool {
	for _, s := range list {
		if s.Address == address {
			return true
		}
	}
	return false
}

func TestDomainsRoundTripWithTheirRecords(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	name := unique("go-sdk-") + ".example"
	d, err := live.CreateDomain(ctx, name)
	if err != nil || d.Name != name || d.Status != "pending" {
		t.Fatalf("create %+v, %v", d, err)
	}
	purposes := map[string]bool{}
	for _, r := range d.Records {
		purposes[r.Purpose] = true
	}
	if !purposes["dkim"] || !purposes["spf"] || !purposes["dmarc"] || !purposes["return_path"] {
		t.Fatalf("records %+v", d.Records)
	}
	_, err = live.CreateDomain(ctx, name)
	wantCode(t, err, 409, "domain_exists")
	list, err := live.ListDomains(ctx)
	if err != nil || !containsDomain(list, d.ID) {
		t.Fatalf("list %+v, %v", list, err)
	}
	// Nothing is published, so the check finds the records missing and the domain stays pending.
	checked, err := live.VerifyDomain(ctx, d.ID)
	if err != nil || checked.Status != "pending" || checked.CheckedAt == nil || checked.Records[0].Status != "failed" {
		t.Fatalf("verify %+v, %v", checked, err)
	}
	got, err := live.GetDomain(ctx, d.ID)
	if err != nil || got.CheckedAt == nil || *got.CheckedAt != *checked.CheckedAt {
		t.Fatalf("get %+v, %v", got, err)
	}
	if err := live.DeleteDomain(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	_, err = live.GetDomain(ctx, d.ID)
	wantCode(t, err, 404, "not_found")
	_, err = live.CreateDomain(ctx, "not a domain")
	wantCode(t, err, 400, "invalid_request")
}

func containsDomain(list []gatepost.Domain, id string) bool {
	for _, d := range list {
		if d.ID == id {
			return true
		}
	}
	return false
}

// delivery is one request the local receiver got, with its raw body.
type delivery struct {
	header http.Header
	body   []byte
}

// receiver is a tiny HTTP server on loopback that Gatepost delivers webhook events to.
func receiver(t *testing.T) (string, <-chan delivery) {
	got := make(chan delivery, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), body}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/gatepost", got
}

func TestWebhooksRoundTrip(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	url, got := receiver(t)
	w, err := live.CreateWebhook(ctx, gatepost.WebhookCreate{URL: url, Events: []string{"email.bounced"}})
	if err != nil || !strings.HasPrefix(w.Secret, "whsec_") || !w.Enabled {
		t.Fatalf("create %+v, %v", w, err)
	}
	updated, err := live.UpdateWebhook(ctx, w.ID, gatepost.WebhookUpdate{Events: []string{"email.sent", "email.bounced"}})
	if err != nil || len(updated.Events) != 2 || updated.Secret != "" {
		t.Fatalf("update %+v, %v", updated, err)
	}
	list, err := live.ListWebhooks(ctx)
	if err != nil || len(list) == 0 {
		t.Fatalf("list %+v, %v", list, err)
	}
	event, err := live.TestWebhook(ctx, w.ID)
	if err != nil || event.Type != "webhook.test" {
		t.Fatalf("test %+v, %v", event, err)
	}
	d := waitFor(t, got, event.ID)
	if _, err := gatepost.VerifyWebhook(d.body, d.header, w.Secret); err != nil {
		t.Fatalf("the test event does not verify: %v", err)
	}
	rotated, err := live.RotateWebhookSecret(ctx, w.ID)
	if err != nil || rotated.Secret == w.Secret {
		t.Fatalf("rotate %+v, %v", rotated, err)
	}
	deliveries, err := live.ListWebhookDeliveries(ctx, w.ID, 0)
	if err != nil || len(deliveries) == 0 || deliveries[0].EventID != event.ID {
		t.Fatalf("deliveries %+v, %v", deliveries, err)
	}
	err = live.RetryWebhookDelivery(ctx, w.ID, deliveries[0].EventID)
	wantCode(t, err, 409, "webhook_delivery_not_failed")
	disabled, err := live.UpdateWebhook(ctx, w.ID, gatepost.WebhookUpdate{Enabled: gatepost.Bool(false)})
	if err != nil || disabled.Enabled || disabled.DisabledReason == nil || *disabled.DisabledReason != "manual" {
		t.Fatalf("disable %+v, %v", disabled, err)
	}
	if err := live.DeleteWebhook(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	_, err = live.GetWebhook(ctx, w.ID)
	wantCode(t, err, 404, "not_found")
}

// waitFor answers the delivery of the event with this id (others are skipped), within 30 s.
func waitFor(t *testing.T, got <-chan delivery, eventID string) delivery {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case d := <-got:
			if strings.Contains(string(d.body), `"id":"`+eventID+`"`) {
				return d
			}
		case <-timeout:
			t.Fatalf("no delivery of %s within 30 s", eventID)
		}
	}
}

// A live send through the relay: its email.sent arrives signed at the local receiver, and
// carries the delivery receipt, which verifies against the JWKS.
func TestALiveSendsWebhookAndReceiptVerify(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	url, got := receiver(t)
	w, err := live.CreateWebhook(ctx, gatepost.WebhookCreate{URL: url, Events: []string{"email.sent"}})
	if err != nil {
		t.Fatal(err)
	}
	defer live.DeleteWebhook(context.Background(), w.ID)
	sent, err := live.Send(ctx, gatepost.SendRequest{From: "App <app@sdk-go.example>", To: "ann@example.com", Subject: "Receipt", HTML: "<p>r</p>"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := live.WaitForEvent(ctx, sent.ID, "email.sent", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	d := waitFor(t, got, m.Event("email.sent").ID)

	event, err := gatepost.VerifyWebhook(d.body, d.header, w.Secret)
	if err != nil || event.Type != "email.sent" || event.Data["message_id"] != sent.ID {
		t.Fatalf("verify %+v, %v", event, err)
	}
	tampered := []byte(strings.Replace(string(d.body), sent.ID, "msg_someone_else", 1))
	_, err = gatepost.VerifyWebhook(tampered, d.header, w.Secret)
	wantReason(t, err, gatepost.ReasonNoMatch)
	_, err = gatepost.VerifyWebhook(d.body, d.header, "whsec_another_secret")
	wantReason(t, err, gatepost.ReasonNoMatch)
	stale := gatepost.WebhookVerifier{Secrets: []string{w.Secret}, Now: func() time.Time { return time.Now().Add(6 * time.Minute) }}
	_, err = stale.Verify(d.body, d.header)
	wantReason(t, err, gatepost.ReasonOutOfTolerance)
	_, err = gatepost.VerifyWebhook(d.body, http.Header{}, w.Secret)
	wantReason(t, err, gatepost.ReasonMissingSignature)

	receipt, err := live.GetReceipt(ctx, sent.ID)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := live.JWKS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := gatepost.VerifyReceipt(receipt.JWS, jwks)
	if err != nil || claims.ID != receipt.ID || claims.MessageID != sent.ID || claims.Reply.Code == nil || *claims.Reply.Code != 250 {
		t.Fatalf("receipt claims %+v, %v", claims, err)
	}
	if fetched, err := live.VerifyMessageReceipt(ctx, sent.ID); err != nil || !reflect.DeepEqual(fetched, claims) {
		t.Fatalf("VerifyMessageReceipt %+v, %v; want %+v", fetched, err, claims)
	}
	inEvent := event.Data["receipt"].(map[string]any)
	if inEvent["jws"] != receipt.JWS {
		t.Fatalf("the event's receipt %v differs from the message's %s", inEvent, receipt.JWS)
	}
	// One changed byte of the payload: the signature no longer matches.
	parts := strings.Split(receipt.JWS, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	payload[len(payload)-2] ^= 1
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
	_, err = gatepost.VerifyReceipt(forged, jwks)
	var rErr *gatepost.ReceiptVerificationError
	if !errors.As(err, &rErr) || rErr.Reason != gatepost.ReceiptInvalidSignature {
		t.Fatalf("forged receipt: %v; want invalid_signature", err)
	}
	_, err = gatepost.VerifyReceipt(receipt.JWS, &gatepost.JWKS{})
	if !errors.As(err, &rErr) || rErr.Reason != gatepost.ReceiptUnknownKey {
		t.Fatalf("empty JWKS: %v; want unknown_key", err)
	}
	// Two more live sends: the tenant's three receipts chain; one left out is a gap, a swap out of order.
	chain := []string{receipt.JWS}
	for i := 0; i < 2; i++ {
		next, err := live.Send(ctx, gatepost.SendRequest{From: "app@sdk-go.example", To: "bob@example.com", Subject: "Chain", HTML: "<p>c</p>"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := live.WaitForEvent(ctx, next.ID, "email.sent", 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		r, err := live.GetReceipt(ctx, next.ID)
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, r.JWS)
	}
	all, err := gatepost.VerifyReceiptChain(chain, jwks)
	if err != nil || len(all) != 3 || all[2].Seq != all[0].Seq+2 {
		t.Fatalf("chain %+v, %v", all, err)
	}
	_, err = gatepost.VerifyReceiptChain([]string{chain[0], chain[2]}, jwks)
	if !errors.As(err, &rErr) || rErr.Reason != gatepost.ReceiptSequenceGap || rErr.Index != 1 {
		t.Fatalf("a gap: %v; want sequence_gap at 1", err)
	}
	_, err = gatepost.VerifyReceiptChain([]string{chain[1], chain[0]}, jwks)
	if !errors.As(err, &rErr) || rErr.Reason != gatepost.ReceiptOutOfOrder {
		t.Fatalf("a swap: %v; want out_of_order", err)
	}
	// A sandbox capture is never delivered: no receipt.
	_, sandbox := clients(t)
	captured, err := sandbox.Send(ctx, gatepost.SendRequest{To: "ann@example.com", Subject: "s", HTML: "<p>s</p>"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.GetReceipt(ctx, captured.ID)
	wantCode(t, err, 404, "receipt_not_found")
}

func wantReason(t *testing.T, err error, reason string) {
	t.Helper()
	var vErr *gatepost.WebhookVerificationError
	if !errors.As(err, &vErr) || vErr.Reason != reason {
		t.Fatalf("err %v; want %s", err, reason)
	}
}
