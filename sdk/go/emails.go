package gatepost

import "context"

// SendRequest is one email (POST /v1/emails). Give Subject and HTML, or a Template.
type SendRequest struct {
	From     string         `json:"from,omitempty"`
	To       string         `json:"to,omitempty"`
	ReplyTo  string         `json:"reply_to,omitempty"`
	Subject  string         `json:"subject,omitempty"`
	HTML     string         `json:"html,omitempty"`
	Text     string         `json:"text,omitempty"`
	Template string         `json:"template,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	// SendAt schedules the send: an RFC 3339 time at most 30 days ahead.
	SendAt  string            `json:"send_at,omitempty"`
	Stream  string            `json:"stream,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Tags    []string          `json:"tags,omitempty"`
	// IdempotencyKey, per message: in a batch, each item may carry its own.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// SendResponse is Gatepost's acceptance of a send: the message is committed to its queue.
type SendResponse struct {
	ID        string  `json:"id"`
	Status    string  `json:"status"`
	To        string  `json:"to"`
	CreatedAt string  `json:"created_at"`
	SendAt    *string `json:"send_at"`
	Sandbox   bool    `json:"sandbox"`
}

// BatchResult is one item's outcome in a batch: accepted (ID set) or refused (Error set).
type BatchResult struct {
	Index int `json:"index"`
	SendResponse
	Replayed bool   `json:"replayed"`
	Error    *Error `json:"error,omitempty"`
}

// BatchResponse lists one result per item, in order.
type BatchResponse struct {
	Results  []BatchResult `json:"results"`
	Accepted int           `json:"accepted"`
	Refused  int           `json:"refused"`
}

// Send sends one email. Without WithIdempotencyKey it makes a key of its own, so that a retry
// after a lost answer cannot send the message twice.
func (c *Client) Send(ctx context.Context, email SendRequest, opts ...RequestOption) (*SendResponse, error) {
	var out SendResponse
	opts = withKey(email.IdempotencyKey, opts)
	if err := c.call(ctx, "emails.send", nil, email, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// SendBatch sends up to 500 emails; each is admitted or refused on its own. A batch key
// (WithIdempotencyKey, made here when absent) gives each item a key derived from it.
func (c *Client) SendBatch(ctx context.Context, emails []SendRequest, opts ...RequestOption) (*BatchResponse, error) {
	var out BatchResponse
	opts = withKey("", opts)
	if err := c.call(ctx, "emails.batch", nil, emails, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// withKey puts a generated idempotency key first, so one given by the caller wins.
func withKey(bodyKey string, opts []RequestOption) []RequestOption {
	if bodyKey != "" {
		// The body's key is the request's key: the header must not differ from it.
		return append(opts, WithIdempotencyKey(bodyKey))
	}
	return append([]RequestOption{WithIdempotencyKey(newIdempotencyKey())}, opts...)
}
