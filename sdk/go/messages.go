package gatepost

import (
	"context"
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
