package gatepost_test

// Inbound routes, received messages and the deliverability reads against a running Gatepost,
// and a received message's payload decoded beside its envelope (against a local server).

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	gatepost "github.com/gatepost/gatepost-go"
)

func TestInboundRoutesNeedAVerifiedDomainAndUnknownOnesAreNotFound(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	_, err := live.CreateInboundRoute(ctx, gatepost.InboundRouteCreate{Match: "support@not-verified.example", Action: "store"})
	wantCode(t, err, 422, "inbound_domain_not_verified")
	if routes, err := live.ListInboundRoutes(ctx); err != nil || len(routes) != 0 {
		t.Fatalf("routes %+v, %v", routes, err)
	}
	_, err = live.GetInboundRoute(ctx, "rte_nope")
	wantCode(t, err, 404, "not_found")
	_, err = live.UpdateInboundRoute(ctx, "rte_nope", gatepost.InboundRouteUpdate{AllEndpoints: true})
	wantCode(t, err, 404, "not_found")
	if page, err := live.ListInboundMessages(ctx, gatepost.ListOptions{}); err != nil || len(page.Data) != 0 || page.NextCursor != nil {
		t.Fatalf("messages %+v, %v", page, err)
	}
	_, err = live.GetInboundMessage(ctx, "inm_nope")
	wantCode(t, err, 404, "not_found")
}

func TestATenantWithoutBouncesHasAClosedBreakerAndNoReports(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	// Other tests send live mail (before this one or not): none bounces or complains.
	r, err := live.GetReputation(ctx)
	if err != nil || r.Status != "closed" || r.Window.HardBounces != 0 || r.Window.Complaints != 0 || r.Since == "" {
		t.Fatalf("reputation %+v, %v", r, err)
	}
	queue, err := live.GetQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range queue {
		if entry.Destination == "" || entry.Waiting < 0 {
			t.Fatalf("queue entry %+v", entry)
		}
	}
	if page, err := live.ListReports(ctx, gatepost.ListOptions{Limit: 10}); err != nil || len(page.Data) != 0 || page.NextCursor != nil {
		t.Fatalf("reports %+v, %v", page, err)
	}
}

func TestAReceivedMessageKeepsItsPayloadBesideItsEnvelope(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id":"inm_1","route_id":"rte_1","mail_from":"ann@example.com","rcpt_to":["support@in.example"],` +
			`"remote_address":"192.0.2.1","received_at":"2026-01-01T00:00:00.000Z","size":120,"subject":"Help","attachments":[]}`))
	}))
	defer srv.Close()
	m, err := gatepost.New("gp_live_x", gatepost.WithBaseURL(srv.URL)).GetInboundMessage(context.Background(), "inm_1")
	if err != nil || m.MailFrom != "ann@example.com" || m.RcptTo[0] != "support@in.example" || m.Payload["subject"] != "Help" {
		t.Fatalf("message %+v, %v", m, err)
	}
}
