package gatepost_test

// Audiences, contacts and the CSV import against a running Gatepost (docs/broadcasts.md).

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	gatepost "github.com/gatepost/gatepost-go"
)

const contactsCSV = "email,name,plan\n" +
	"ann@example.com,Ann Again,pro\n" + // a contact already: updated
	"bob@example.com,Bob,free\n" +
	"not-an-address,Nobody,free\n" + // row 4: refused on its own
	"cid@example.com,,\n"

func TestAnAudienceHoldsContactsPagedByCursorAndRefusesARepeat(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	audience, err := live.CreateAudience(ctx, "Newsletter")
	if err != nil || !strings.HasPrefix(audience.ID, "aud_") || audience.Name != "Newsletter" || audience.Contacts != 0 {
		t.Fatalf("audience %+v, %v", audience, err)
	}
	var emails []string
	for _, n := range "01234" {
		email := "reader" + string(n) + "@example.com"
		emails = append(emails, email)
		if _, err := live.AddContact(ctx, audience.ID, gatepost.ContactCreate{Email: email, Data: map[string]any{"n": string(n)}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = live.AddContact(ctx, audience.ID, gatepost.ContactCreate{Email: "READER0@example.com"})
	wantCode(t, err, 409, "contact_exists")
	first, err := live.ListContacts(ctx, audience.ID, gatepost.ListOptions{Limit: 2})
	if err != nil || len(first.Data) != 2 || first.NextCursor == nil {
		t.Fatalf("first page %+v, %v", first, err)
	}
	// The iterator follows next_cursor to the last page: every contact once.
	var seen []string
	it := live.Contacts(audience.ID, 2)
	for it.Next(ctx) {
		seen = append(seen, it.Contact().Email)
	}
	sort.Strings(seen)
	if it.Err() != nil || !reflect.DeepEqual(seen, emails) {
		t.Fatalf("iterated %v, %v; want %v", seen, it.Err(), emails)
	}
	if got, err := live.GetAudience(ctx, audience.ID); err != nil || got.Contacts != 5 {
		t.Fatalf("audience %+v, %v", got, err)
	}
	if err := live.DeleteAudience(ctx, audience.ID); err != nil {
		t.Fatal(err)
	}
	_, err = live.GetAudience(ctx, audience.ID)
	wantCode(t, err, 404, "not_found")
	// Iterating a deleted audience ends with its error.
	gone := live.Contacts(audience.ID, 0)
	if gone.Next(ctx) || !gatepost.IsCode(gone.Err(), "not_found") {
		t.Fatalf("iterating a deleted audience: %v", gone.Err())
	}
}

func TestAContactIsReadByIDOrEmailChangedAndRemoved(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	audience, err := live.CreateAudience(ctx, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	made, err := live.AddContact(ctx, audience.ID, gatepost.ContactCreate{Email: "Dee@Example.com", Name: "Dee", Data: map[string]any{"plan": "pro"}})
	if err != nil || made.Email != "dee@example.com" || made.Name == nil || *made.Name != "Dee" {
		t.Fatalf("contact %+v, %v", made, err)
	}
	byEmail, err := live.GetContact(ctx, audience.ID, "dee@example.com")
	if err != nil || byEmail.ID != made.ID {
		t.Fatalf("by email %+v, %v", byEmail, err)
	}
	yes := true
	changed, err := live.UpdateContact(ctx, audience.ID, made.ID, gatepost.ContactUpdate{ClearName: true, Unsubscribed: &yes})
	if err != nil || changed.Name != nil || !changed.Unsubscribed || changed.Data["plan"] != "pro" {
		t.Fatalf("changed %+v, %v", changed, err)
	}
	if err := live.RemoveContact(ctx, audience.ID, "dee@example.com"); err != nil {
		t.Fatal(err)
	}
	_, err = live.GetContact(ctx, audience.ID, made.ID)
	wantCode(t, err, 404, "not_found")
}

func TestACSVImportReportsAddedUpdatedAndRefusedRows(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	audience, err := live.CreateAudience(ctx, "Imported")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.AddContact(ctx, audience.ID, gatepost.ContactCreate{Email: "ann@example.com", Name: "Ann"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "contacts.csv")
	if err := os.WriteFile(path, []byte(contactsCSV), 0o600); err != nil {
		t.Fatal(err)
	}
	report, err := live.ImportContactsFile(ctx, audience.ID, path)
	want := &gatepost.ImportReport{Added: 2, Updated: 1, RefusedCount: 1,
		Refused: []gatepost.RefusedRow{{Row: 4, Email: "not-an-address", Reason: "not a valid email address"}}}
	if err != nil || !reflect.DeepEqual(report, want) {
		t.Fatalf("report %+v, %v; want %+v", report, err, want)
	}
	ann, err := live.GetContact(ctx, audience.ID, "ann@example.com")
	if err != nil || *ann.Name != "Ann Again" || ann.Data["plan"] != "pro" {
		t.Fatalf("ann %+v, %v", ann, err)
	}
	// The same rows again from memory: every good row is a contact already.
	again, err := live.ImportContacts(ctx, audience.ID, strings.NewReader(contactsCSV))
	if err != nil || again.Added != 0 || again.Updated != 3 || again.RefusedCount != 1 {
		t.Fatalf("again %+v, %v", again, err)
	}
	// A pipe: sent once, chunked.
	reader, writer := io.Pipe()
	go func() { writer.CloseWithError(writeAll(writer, "email\neve@example.com\n")) }()
	piped, err := live.ImportContacts(ctx, audience.ID, reader)
	if err != nil || piped.Added != 1 || len(piped.Refused) != 0 {
		t.Fatalf("piped %+v, %v", piped, err)
	}
	if got, err := live.GetAudience(ctx, audience.ID); err != nil || got.Contacts != 4 {
		t.Fatalf("audience %+v, %v", got, err)
	}
}

func writeAll(w io.Writer, s string) error {
	_, err := io.WriteString(w, s)
	return err
}

func TestAFileThatCannotBeReadIsRefusedWhole(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	audience, err := live.CreateAudience(ctx, "Broken")
	if err != nil {
		t.Fatal(err)
	}
	_, err = live.ImportContacts(ctx, audience.ID, bytes.NewReader([]byte("email,name\nann@example.com,\"never closed\n")))
	if apiErr := wantCode(t, err, 422, "csv_invalid"); len(apiErr.Details) == 0 {
		t.Fatalf("no details in %+v", apiErr)
	}
	page, err := live.ListContacts(ctx, audience.ID, gatepost.ListOptions{})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("contacts %+v, %v", page, err)
	}
}

func TestATrackingHostIsSetThenCleared(t *testing.T) {
	live, _ := clients(t)
	ctx := bounded(t)
	name := unique("go-") + ".example"
	d, err := live.CreateDomain(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	host := "track." + name
	set, err := live.SetTrackingHost(ctx, d.ID, &host)
	if err != nil || set.TrackingHost == nil || *set.TrackingHost != host || !hasRecord(set, "tracking", "CNAME") {
		t.Fatalf("set %+v, %v", set, err)
	}
	elsewhere := "track.elsewhere.example"
	_, err = live.SetTrackingHost(ctx, d.ID, &elsewhere)
	wantCode(t, err, 422, "tracking_host_invalid")
	cleared, err := live.SetTrackingHost(ctx, d.ID, nil)
	if err != nil || cleared.TrackingHost != nil || hasRecord(cleared, "tracking", "CNAME") {
		t.Fatalf("cleared %+v, %v", cleared, err)
	}
	if err := live.DeleteDomain(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
}

func hasRecord(d *gatepost.Domain, purpose, kind string) bool {
	for _, r := range d.Records {
		if r.Purpose == purpose && r.Type == kind {
			return true
		}
	}
	return false
}

func TestFollowCallsBackTheTimelineToItsEndAndTheFeedAnswersAfterACursor(t *testing.T) {
	_, sandbox := clients(t)
	ctx := bounded(t)
	start, err := sandbox.ListEvents(ctx, gatepost.EventsQuery{})
	if err != nil || len(start.Data) != 0 {
		t.Fatalf("start %+v, %v", start, err)
	}
	sent, err := sandbox.Send(ctx, gatepost.SendRequest{To: "feed@example.com", Subject: "Feed", HTML: "<p>f</p>"})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	if err := sandbox.Follow(ctx, sent.ID, 50*time.Millisecond, func(e gatepost.Event) error {
		types = append(types, e.Type)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if types[0] != "message.accepted" || types[len(types)-1] != "email.sent" {
		t.Fatalf("followed %v", types)
	}
	// A callback's error ends the follow with it.
	stop := errors.New("stop")
	if err := sandbox.Follow(ctx, sent.ID, time.Millisecond, func(gatepost.Event) error { return stop }); err != stop {
		t.Fatalf("follow ended with %v; want the callback's error", err)
	}
	cursor := start.Cursor
	for {
		page, err := sandbox.ListEvents(ctx, gatepost.EventsQuery{After: cursor, Wait: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			if e.Data["message_id"] == sent.ID {
				if e.Type != "email.sent" {
					t.Fatalf("feed event %+v", e)
				}
				return
			}
		}
		cursor = page.Cursor
	}
}
