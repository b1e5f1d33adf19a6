package gatepost

import (
	"context"
	"net/url"
	"strconv"
)

// Webhook is an endpoint lifecycle events are pushed to. Secret is set only in the answers of
// CreateWebhook and RotateWebhookSecret: Gatepost shows it once.
type Webhook struct {
	ID                      string   `json:"id"`
	URL                     string   `json:"url"`
	Events                  []string `json:"events"`
	Enabled                 bool     `json:"enabled"`
	DisabledReason          *string  `json:"disabled_reason"`
	DisabledAt              *string  `json:"disabled_at"`
	PreviousSecretExpiresAt *string  `json:"previous_secret_expires_at"`
	CreatedAt               string   `json:"created_at"`
	UpdatedAt               string   `json:"updated_at"`
	Secret                  string   `json:"secret,omitempty"`
}

// WebhookCreate subscribes an https URL to event types (email.sent, email.bounced, …).
type WebhookCreate struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

// WebhookUpdate changes the fields that are set; Enabled false disables by hand.
type WebhookUpdate struct {
	URL     *string  `json:"url,omitempty"`
	Events  []string `json:"events,omitempty"`
	Enabled *bool    `json:"enabled,omitempty"`
}

// Bool answers a pointer to b, for the optional fields of updates.
func Bool(b bool) *bool { return &b }

// RotatedSecret is a webhook's new secret; until PreviousSecretExpiresAt both sign.
type RotatedSecret struct {
	ID                      string `json:"id"`
	Secret                  string `json:"secret"`
	PreviousSecretExpiresAt string `json:"previous_secret_expires_at"`
}

// WebhookDelivery is one delivery attempt to an endpoint.
type WebhookDelivery struct {
	EventID       string  `json:"event_id"`
	EventType     string  `json:"event_type"`
	Attempt       int     `json:"attempt"`
	At            string  `json:"at"`
	DurationMS    int     `json:"duration_ms"`
	StatusCode    *int    `json:"status_code"`
	Error         *string `json:"error"`
	Result        string  `json:"result"`
	NextAttemptAt *string `json:"next_attempt_at"`
}

// CreateWebhook subscribes an endpoint; the answer's Secret is shown this once.
func (c *Client) CreateWebhook(ctx context.Context, w WebhookCreate) (*Webhook, error) {
	var out Webhook
	if err := c.call(ctx, "webhooks.create", nil, w, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListWebhooks answers every endpoint, oldest first.
func (c *Client) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	var out struct {
		Data []Webhook `json:"data"`
	}
	if err := c.call(ctx, "webhooks.list", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// GetWebhook reads an endpoint (never its secret).
func (c *Client) GetWebhook(ctx context.Context, id string) (*Webhook, error) {
	var out Webhook
	if err := c.call(ctx, "webhooks.get", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateWebhook changes an endpoint's URL, events or enabled state.
func (c *Client) UpdateWebhook(ctx context.Context, id string, changes WebhookUpdate) (*Webhook, error) {
	var out Webhook
	if err := c.call(ctx, "webhooks.update", []string{id}, changes, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteWebhook deletes an endpoint; nothing more is delivered to it.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	return c.call(ctx, "webhooks.delete", []string{id}, nil, nil, nil, nil)
}

// RotateWebhookSecret makes a new secret (shown once); for 24 hours deliveries carry both signatures.
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (*RotatedSecret, error) {
	var out RotatedSecret
	if err := c.call(ctx, "webhooks.rotate", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// TestWebhook sends a webhook.test event to the endpoint through the normal delivery path and
// answers the event sent.
func (c *Client) TestWebhook(ctx context.Context, id string) (*Event, error) {
	var out struct {
		Event Event `json:"event"`
	}
	if err := c.call(ctx, "webhooks.test", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out.Event, nil
}

// ListWebhookDeliveries answers the endpoint's last attempts, newest first (limit 0: all kept, 100).
func (c *Client) ListWebhookDeliveries(ctx context.Context, id string, limit int) ([]WebhookDelivery, error) {
	var out struct {
		Data []WebhookDelivery `json:"data"`
	}
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if err := c.call(ctx, "webhooks.deliveries", []string{id}, nil, q, &out, nil); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// RetryWebhookDelivery redelivers a failed event to the endpoint by hand (one more attempt,
// kept 30 days); an event that has not failed is Code "webhook_delivery_not_failed".
func (c *Client) RetryWebhookDelivery(ctx context.Context, id, eventID string) error {
	return c.call(ctx, "webhooks.retry", []string{id, eventID}, nil, nil, nil, nil)
}
