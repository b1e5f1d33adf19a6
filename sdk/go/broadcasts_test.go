package gatepost_test

// Broadcasts, automations run by a custom event, and received mail downloaded, against a running
// Gatepost (docs/broadcasts.md, docs/automations.md, docs/inbound.md).

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	gatepost "github.com/gatepost/gatepost-go"
)

// eventually calls check until it answers true; the test fails after 20 s.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !check(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within 20 s", what)
		}
	}
}

func audienceOf(t *testing.T, ctx context.Context, live *gatepost.Client, name string, emails ...string) string {
	t.Helper()
	audience, err := live.CreateAudience(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, email := range emails {
		first := strings.Split(email, ".")[0] // ann.go@example.com: Ann
		contact := gatepost.ContactCreate{Email: email, Name: strings.ToUpper(first[:1]) + first[1:]}
		if _, err := live.AddContact(ctx, audience.ID, contact); err != nil {
			t.Fatal(err)
		}
	}
	return audience.ID
}

func TestASandboxBroadcastReachesEachContactAndIsSentOnce(t *testing.T) {
	live, sandbox := clients(t)
	ctx := bounded(t)
	audienceID := audienceOf(t, ctx, live, "Go readers", "ann.go@example.com", "bob.go@example.com")
	draft, err := live.CreateBroadcast(ctx, gatepost.BroadcastCreate{
		Name: "Hello", AudienceID: audienceID, From: "News <news@shop.example>",
		Subject: "Hello from Go, {{name}}", HTML: "<p>Hello {{name}}</p>", Sandbox: true,
	})
	if err != nil || !strings.HasPrefix(draft.ID, "bro_") || draft.Status != "draft" || draft.Progress != nil {
		t.Fatalf("draft %+v, %v", draft, err)
	}
	page, err := live.ListBroadcasts(ctx, gatepost.ListOptions{Limit: 10})
	if err != nil || len(page.Data) == 0 || page.Data[0].ID != draft.ID {
		t.Fatalf("list %+v, %v", page, err)
	}
	if sent, err := live.SendBroadcast(ctx, draft.ID, time.Time{}); err != nil || (sent.Status != "sending" && sent.Status != "sent") {
		t.Fatalf("send %+v, %v", sent, err)
	}
	var done *gatepost.Broadcast
	eventually(t, "the broadcast sent", func() bool {
		done, err = live.GetBroadcast(ctx, draft.ID)
		return err == nil && done.Status == "sent" && done.Results != nil && done.Results.Sent == 2
	})
	if done.Progress.Admitted != 2 {
		t.Fatalf("progress %+v", done.Progress)
	}
	eventually(t, "both captured", func() bool {
		captured, err := sandbox.ListCaptured(ctx, gatepost.ListOptions{Limit: 50})
		seen := 0
		for _, c := range captured.Data {
			if err == nil && (c.Subject == "Hello from Go, Ann" || c.Subject == "Hello from Go, Bob") {
				seen++
			}
		}
		return seen == 2
	})
	_, err = live.SendBroadcast(ctx, draft.ID, time.Time{})
	wantCode(t, err, 409, "broadcast_already_sent")
	wantCode(t, live.DeleteBroadcast(ctx, draft.ID), 409, "broadcast_not_draft")
}

func TestABroadcastIsScheduledCancelledOrDeletedAsADraft(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	audienceID := audienceOf(t, ctx, live, "Go later", "cy.go@example.com")
	fields := gatepost.BroadcastCreate{Name: "Later", AudienceID: audienceID, From: "news@shop.example", Subject: "s", HTML: "h", Sandbox: true}
	later, err := live.CreateBroadcast(ctx, fields)
	if err != nil {
		t.Fatal(err)
	}
	scheduled, err := live.SendBroadcast(ctx, later.ID, time.Now().Add(time.Hour))
	if err != nil || scheduled.Status != "scheduled" || scheduled.SendAt == nil {
		t.Fatalf("scheduled %+v, %v", scheduled, err)
	}
	if cancelled, err := live.CancelBroadcast(ctx, later.ID); err != nil || cancelled.Status != "cancelled" {
		t.Fatalf("cancelled %+v, %v", cancelled, err)
	}
	past, err := live.CreateBroadcast(ctx, fields)
	if err != nil {
		t.Fatal(err)
	}
	_, err = live.SendBroadcast(ctx, past.ID, time.Now().Add(-time.Hour))
	wantCode(t, err, 422, "send_at_out_of_range")
	if err := live.DeleteBroadcast(ctx, past.ID); err != nil {
		t.Fatal(err)
	}
	_, err = live.GetBroadcast(ctx, past.ID)
	wantCode(t, err, 404, "not_found")
}

func TestACustomEventStartsAnAutomationRunWhoseTimelineIsRead(t *testing.T) {
	live, sandbox := clients(t)
	ctx := bounded(t)
	if _, err := live.CreateTemplate(ctx, gatepost.TemplateCreate{Slug: "go-automation", Subject: "On {{plan}}", HTML: "<p>{{name}} is on {{plan}}</p>"}); err != nil {
		t.Fatal(err)
	}
	audienceID := audienceOf(t, ctx, live, "Go automation", "dee.go@example.com")
	automation, err := live.CreateAutomation(ctx, gatepost.AutomationCreate{
		Name: "Upgrade", AudienceID: audienceID, Sandbox: true,
		Trigger: gatepost.AutomationTrigger{Type: "custom_event", Name: "plan.upgraded"},
		Steps: []gatepost.AutomationStep{
			{ID: "pause", Type: "wait", Duration: "PT1S"},
			{ID: "hello", Type: "send", Template: "go-automation", From: "Shop <hi@shop.example>"},
		},
	})
	if err != nil || !strings.HasPrefix(automation.ID, "aut_") || !automation.Enabled || automation.Steps[0].Seconds != 1 {
		t.Fatalf("automation %+v, %v", automation, err)
	}
	if list, err := live.ListAutomations(ctx); err != nil || list[len(list)-1].ID != automation.ID {
		t.Fatalf("list %+v, %v", list, err)
	}
	if got, err := live.GetAutomation(ctx, automation.ID); err != nil || got.Name != "Upgrade" {
		t.Fatalf("get %+v, %v", got, err)
	}

	event := gatepost.CustomEvent{Name: "plan.upgraded", Email: "dee.go@example.com", Data: map[string]any{"plan": "pro"}, IdempotencyKey: "go-up-1"}
	posted, err := sandbox.SendEvent(ctx, event)
	if err != nil || !strings.HasPrefix(posted.ID, "evt_") || len(posted.Runs) != 1 {
		t.Fatalf("posted %+v, %v", posted, err)
	}
	if again, err := sandbox.SendEvent(ctx, event); err != nil || len(again.Runs) != 0 {
		t.Fatalf("again %+v, %v", again, err)
	}
	var run *gatepost.AutomationRun
	eventually(t, "the run completed", func() bool {
		run, err = live.GetAutomationRun(ctx, automation.ID, posted.Runs[0])
		return err == nil && run.Status == "completed"
	})
	var types []string
	for _, e := range run.Timeline {
		types = append(types, e.Type)
	}
	if strings.Join(types, " ") != "run.started step.waiting step.sent run.completed" {
		t.Fatalf("timeline %v", types)
	}
	// The run's send step admitted the message; its capture follows a moment later.
	eventually(t, "the run's message captured", func() bool {
		captured, err := sandbox.GetCaptured(ctx, run.Timeline[2].Data["message_id"].(string))
		return err == nil && captured.Subject == "On pro"
	})
	eventually(t, "the run listed", func() bool {
		page, err := live.ListAutomationRuns(ctx, automation.ID, gatepost.ListOptions{Limit: 5})
		return err == nil && len(page.Data) == 1 && page.Data[0].ID == run.ID
	})

	_, err = sandbox.SendEvent(ctx, gatepost.CustomEvent{Name: "plan.upgraded", Email: "stranger@example.com"})
	wantCode(t, err, 404, "contact_not_found")
	off := false
	if got, err := live.UpdateAutomation(ctx, automation.ID, gatepost.AutomationUpdate{Enabled: &off}); err != nil || got.Enabled {
		t.Fatalf("disabled %+v, %v", got, err)
	}
	if err := live.DeleteAutomation(ctx, automation.ID); err != nil {
		t.Fatal(err)
	}
	_, err = live.GetAutomation(ctx, automation.ID)
	wantCode(t, err, 404, "not_found")
}

func TestAReceivedMessageDownloadsByteForByteWithItsAttachment(t *testing.T) {
	e := gatepostEnv(t)
	id, key, path := os.Getenv("GATEPOST_INBOUND_ID"), os.Getenv("GATEPOST_INBOUND_KEY"), os.Getenv("GATEPOST_INBOUND_EML")
	if id == "" || key == "" || path == "" {
		t.Fatal("set GATEPOST_INBOUND_ID, GATEPOST_INBOUND_KEY and GATEPOST_INBOUND_EML (go.sdk.test.ts does)")
	}
	receiver := gatepost.New(key, gatepost.WithBaseURL(e.url))
	ctx := bounded(t)
	sent, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := receiver.GetInboundRaw(ctx, id); err != nil || !bytes.Equal(raw, sent) {
		t.Fatalf("raw %q, %v", raw, err)
	}
	a, err := receiver.GetInboundAttachment(ctx, id, 0)
	if err != nil || a.Filename != "receipt.txt" || !strings.HasPrefix(a.ContentType, "text/plain") || string(a.Content) != "Order 1042, paid.\n" {
		t.Fatalf("attachment %+v, %v", a, err)
	}
	_, err = receiver.GetInboundAttachment(ctx, id, 1)
	wantCode(t, err, 404, "not_found")
	// Another tenant's message is one that does not exist.
	live, _ := clients(t)
	_, err = live.GetInboundRaw(ctx, id)
	wantCode(t, err, 404, "not_found")
}
