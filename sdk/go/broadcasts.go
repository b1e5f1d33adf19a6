package gatepost

import (
	"context"
	"time"
)

// BroadcastCreate is a draft broadcast: HTML or a Template, one of the two; a Subject unless the
// template has one (docs/broadcasts.md).
type BroadcastCreate struct {
	Name       string `json:"name"`
	AudienceID string `json:"audience_id"`
	From       string `json:"from"`
	Subject    string `json:"subject,omitempty"`
	HTML       string `json:"html,omitempty"`
	Text       string `json:"text,omitempty"`
	Template   string `json:"template,omitempty"`
	// Data are merge variables of every message; each contact's data, email and name win over them.
	Data map[string]any `json:"data,omitempty"`
	// Sandbox captures every message instead of delivering it.
	Sandbox bool `json:"sandbox,omitempty"`
}

// Broadcast is one message to each contact of an audience. Paused, Progress and Results are
// answered when it is read one by one (GetBroadcast, SendBroadcast, CancelBroadcast), not listed.
type Broadcast struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	AudienceID string         `json:"audience_id"`
	From       string         `json:"from"`
	Subject    *string        `json:"subject"`
	HTML       *string        `json:"html"`
	Text       *string        `json:"text"`
	Template   *string        `json:"template"`
	Data       map[string]any `json:"data"`
	Sandbox    bool           `json:"sandbox"`
	// Status is draft, scheduled, sending, paused, sent or cancelled.
	Status    string             `json:"status"`
	SendAt    *string            `json:"send_at"`
	CreatedAt string             `json:"created_at"`
	UpdatedAt string             `json:"updated_at"`
	Paused    *BroadcastPaused   `json:"paused"`
	Progress  *BroadcastProgress `json:"progress"`
	Results   *BroadcastResults  `json:"results"`
}

// BroadcastPaused says why a broadcast waits (an open reputation breaker, the daily quota) and until when.
type BroadcastPaused struct {
	Reason string `json:"reason"`
	Until  string `json:"until"`
}

// BroadcastProgress is the fan-out's own count: messages admitted, contacts refused.
type BroadcastProgress struct {
	Admitted int `json:"admitted"`
	Refused  struct {
		Suppressed   int `json:"suppressed"`
		Unsubscribed int `json:"unsubscribed"`
		Other        int `json:"other"`
	} `json:"refused"`
	StartedAt  *string `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
}

// BroadcastResults counts the messages' lifecycle events, each message once per kind.
type BroadcastResults struct {
	Sent         int `json:"sent"`
	Bounced      int `json:"bounced"`
	Opened       int `json:"opened"`
	Clicked      int `json:"clicked"`
	Unsubscribed int `json:"unsubscribed"`
	Complained   int `json:"complained"`
}

// BroadcastPage is one page of broadcasts, newest first; NextCursor is nil on the last.
type BroadcastPage struct {
	Data       []Broadcast `json:"data"`
	NextCursor *string     `json:"next_cursor"`
}

// CreateBroadcast makes a draft; an *Error not_found for an audience that is not the tenant's,
// template_not_found for an unknown template.
func (c *Client) CreateBroadcast(ctx context.Context, b BroadcastCreate) (*Broadcast, error) {
	var out Broadcast
	if err := c.call(ctx, "broadcasts.create", nil, b, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListBroadcasts answers a page of the tenant's broadcasts, newest first.
func (c *Client) ListBroadcasts(ctx context.Context, page ListOptions) (*BroadcastPage, error) {
	var out BroadcastPage
	if err := c.call(ctx, "broadcasts.list", nil, nil, page.query(), &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetBroadcast reads a broadcast with its progress and results.
func (c *Client) GetBroadcast(ctx context.Context, id string) (*Broadcast, error) {
	var out Broadcast
	if err := c.call(ctx, "broadcasts.get", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteBroadcast deletes a draft; an *Error broadcast_not_draft once it has been sent (cancel it instead).
func (c *Client) DeleteBroadcast(ctx context.Context, id string) error {
	return c.call(ctx, "broadcasts.delete", []string{id}, nil, nil, nil, nil)
}

// SendBroadcast sends a draft now (sendAt zero) or schedules it at sendAt (at most 30 days
// ahead). It is not retried after a failure: a send that went through answers a second one
// broadcast_already_sent.
func (c *Client) SendBroadcast(ctx context.Context, id string, sendAt time.Time) (*Broadcast, error) {
	body := map[string]string{}
	if !sendAt.IsZero() {
		body["send_at"] = sendAt.UTC().Format(time.RFC3339Nano)
	}
	var out Broadcast
	if err := c.call(ctx, "broadcasts.send", []string{id}, body, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelBroadcast stops a scheduled, sending or paused broadcast: nobody not yet admitted is sent to.
func (c *Client) CancelBroadcast(ctx context.Context, id string) (*Broadcast, error) {
	var out Broadcast
	if err := c.call(ctx, "broadcasts.cancel", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}
