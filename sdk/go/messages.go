package gatepost

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// Event is one entry of a message's timeline, in the envelope webhooks deliver too.
type Event struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	CreatedAt string         `json:"created_at"`
	Data      map[string]any `json:"data"`
}

// Message is a message and its whole timeline, oldest event first.
type Message struct {
	ID              string   `json:"id"`
	Status          string   `json:"status"`
	From            string   `json:"from"`
	To              string   `json:"to"`
	Subject         string   `json:"subject"`
	Stream          string   `json:"stream"`
	Sandbox         bool     `json:"sandbox"`
	Tags            []string `json:"tags"`
	IdempotencyKey  *string  `json:"idempotency_key"`
	MessageIDHeader string   `json:"message_id_header"`
	CreatedAt       string   `json:"created_at"`
	SendAt          *string  `json:"send_at"`
	Events          []Event  `json:"events"`
}

// Event answers the first event of this type on the timeline, or nil.
func (m *Message) Event(eventType string) *Event {
	for i := range m.Events {
		if m.Events[i].Type == eventType {
			return &m.Events[i]
		}
	}
	return nil
}

// GetMessage reads a message and its timeline.
func (c *Client) GetMessage(ctx context.Context, id string) (*Message, error) {
	var out Message
	if err := c.call(ctx, "messages.get", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// WaitForEvent polls the message's timeline every `every` until an event of this type is on
// it, and answers the message then; the context bounds the wait (give it a deadline).
func (c *Client) WaitForEvent(ctx context.Context, id, eventType string, every time.Duration) (*Message, error) {
	for {
		m, err := c.GetMessage(ctx, id)
		if err != nil {
			return nil, err
		}
		if m.Event(eventType) != nil {
			return m, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
}

// FinalStatuses are the statuses of a message that has had its last delivery outcome.
var FinalStatuses = map[string]bool{"sent": true, "bounced": true}

// Follow calls fn with each event of the message's timeline as it comes, the ones so far first,
// reading it every `every`, until the message is sent or bounced (FinalStatuses): then it
// answers nil. An error of fn, or of a read, ends it; the context bounds it.
func (c *Client) Follow(ctx context.Context, id string, every time.Duration, fn func(Event) error) error {
	seen := map[string]bool{}
	for {
		m, err := c.GetMessage(ctx, id)
		if err != nil {
			return err
		}
		for _, e := range m.Events {
			if seen[e.ID] {
				continue
			}
			seen[e.ID] = true
			if err := fn(e); err != nil {
				return err
			}
		}
		if FinalStatuses[m.Status] {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}

// EventsQuery reads the event feed: After is an earlier page's Cursor (empty: only what comes
// next); Wait (seconds, up to 25) holds the request open until an event comes; Limit, 1–1000.
type EventsQuery struct {
	After string
	Wait  int
	Limit int
}

// EventPage is a page of the tenant's event feed, oldest first; give Cursor as the next After.
type EventPage struct {
	Data   []Event `json:"data"`
	Cursor string  `json:"cursor"`
}

// ListEvents reads the tenant's lifecycle events after q.After (GET /v1/events), the envelope
// webhooks deliver; a sandbox key reads those of sandbox messages.
func (c *Client) ListEvents(ctx context.Context, q EventsQuery) (*EventPage, error) {
	query := url.Values{}
	if q.After != "" {
		query.Set("after", q.After)
	}
	if q.Wait > 0 {
		query.Set("wait", strconv.Itoa(q.Wait))
	}
	if q.Limit > 0 {
		query.Set("limit", strconv.Itoa(q.Limit))
	}
	// The wait is the server's: the attempt's deadline must outlast it.
	opts := []RequestOption{func(o *requestOptions) { o.minTimeout = time.Duration(q.Wait+10) * time.Second }}
	var out EventPage
	if err := c.call(ctx, "events.list", nil, nil, query, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Receipt is one signed delivery receipt: a compact JWS (see VerifyReceipt).
type Receipt struct {
	ID  string `json:"id"`
	JWS string `json:"jws"`
	// Domain is the recipient domain of the receipt's transaction (in MessageReceipt.Receipts).
	Domain *string `json:"domain,omitempty"`
}

// MessageReceipt is a message's latest receipt (ID, JWS) and every one of it, oldest first.
type MessageReceipt struct {
	ID       string    `json:"id"`
	JWS      string    `json:"jws"`
	Receipts []Receipt `json:"receipts"`
}

// GetReceipt reads a message's delivery receipt; before any server accepted the message it is
// an *Error with Code "receipt_not_found".
func (c *Client) GetReceipt(ctx context.Context, messageID string) (*MessageReceipt, error) {
	var out MessageReceipt
	if err := c.call(ctx, "messages.receipt", []string{messageID}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// JWKS reads the operator's public receipt keys (GET /.well-known/jwks.json, needs no key).
func (c *Client) JWKS(ctx context.Context) (*JWKS, error) {
	var out JWKS
	if err := c.call(ctx, "receipts.jwks", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// VerifyMessageReceipt fetches the message's latest receipt and the operator's public keys, and
// verifies it (VerifyReceipt).
func (c *Client) VerifyMessageReceipt(ctx context.Context, messageID string) (*ReceiptClaims, error) {
	receipt, err := c.GetReceipt(ctx, messageID)
	if err != nil {
		return nil, err
	}
	jwks, err := c.JWKS(ctx)
	if err != nil {
		return nil, err
	}
	return VerifyReceipt(receipt.JWS, jwks)
}
