package gatepost

import (
	"context"
	"encoding/json"
	"mime"
	"strconv"
)

// InboundRoute says where mail to a match goes (docs/inbound.md).
type InboundRoute struct {
	ID string `json:"id"`
	// Match is user@domain, *@domain or a local part with * wildcards, in lower case.
	Match  string `json:"match"`
	Domain string `json:"domain"`
	// Action is webhook (post email.inbound) or store (keep the message only).
	Action string `json:"action"`
	// EndpointID is the one endpoint posted to; nil: every endpoint subscribed to email.inbound.
	EndpointID *string `json:"endpoint_id"`
	CreatedAt  string  `json:"created_at"`
	UpdatedAt  string  `json:"updated_at"`
}

// InboundRouteCreate is a route to make; Action defaults to webhook.
type InboundRouteCreate struct {
	Match      string `json:"match"`
	Action     string `json:"action,omitempty"`
	EndpointID string `json:"endpoint_id,omitempty"`
}

// InboundRouteUpdate changes the fields set; AllEndpoints posts to every endpoint subscribed
// to email.inbound again (endpoint_id null).
type InboundRouteUpdate struct {
	Match        string `json:"match,omitempty"`
	Action       string `json:"action,omitempty"`
	EndpointID   string `json:"-"`
	AllEndpoints bool   `json:"-"`
}

func (u InboundRouteUpdate) body() map[string]any {
	changes := map[string]any{}
	if u.Match != "" {
		changes["match"] = u.Match
	}
	if u.Action != "" {
		changes["action"] = u.Action
	}
	if u.EndpointID != "" {
		changes["endpoint_id"] = u.EndpointID
	}
	if u.AllEndpoints {
		changes["endpoint_id"] = nil
	}
	return changes
}

// InboundMessage is a message the inbound MX received: its envelope, and in Payload every field
// of its email.inbound payload (subject, text, html, attachments, …) as decoded JSON.
type InboundMessage struct {
	ID            string         `json:"id"`
	RouteID       string         `json:"route_id"`
	MailFrom      string         `json:"mail_from"`
	RcptTo        []string       `json:"rcpt_to"`
	RemoteAddress string         `json:"remote_address"`
	ReceivedAt    string         `json:"received_at"`
	Size          int            `json:"size"`
	Payload       map[string]any `json:"-"`
}

// InboundMessagePage is one page of received messages, newest first; NextCursor is nil on the last.
type InboundMessagePage struct {
	Data       []InboundMessage `json:"data"`
	NextCursor *string          `json:"next_cursor"`
}

// CreateInboundRoute routes mail to a match on a verified domain of the tenant; another domain
// is Code "inbound_domain_not_verified" (422).
func (c *Client) CreateInboundRoute(ctx context.Context, route InboundRouteCreate) (*InboundRoute, error) {
	var out InboundRoute
	if err := c.call(ctx, "inbound.routes.create", nil, route, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListInboundRoutes answers the tenant's inbound routes.
func (c *Client) ListInboundRoutes(ctx context.Context) ([]InboundRoute, error) {
	var out struct {
		Data []InboundRoute `json:"data"`
	}
	if err := c.call(ctx, "inbound.routes.list", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// GetInboundRoute reads one route.
func (c *Client) GetInboundRoute(ctx context.Context, id string) (*InboundRoute, error) {
	var out InboundRoute
	if err := c.call(ctx, "inbound.routes.get", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateInboundRoute changes the fields set in changes.
func (c *Client) UpdateInboundRoute(ctx context.Context, id string, changes InboundRouteUpdate) (*InboundRoute, error) {
	var out InboundRoute
	if err := c.call(ctx, "inbound.routes.update", []string{id}, changes.body(), nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteInboundRoute deletes a route.
func (c *Client) DeleteInboundRoute(ctx context.Context, id string) error {
	return c.call(ctx, "inbound.routes.delete", []string{id}, nil, nil, nil, nil)
}

// ListInboundMessages answers a page of the mail received for the tenant, newest first.
func (c *Client) ListInboundMessages(ctx context.Context, page ListOptions) (*InboundMessagePage, error) {
	var out struct {
		Data       []json.RawMessage `json:"data"`
		NextCursor *string           `json:"next_cursor"`
	}
	if err := c.call(ctx, "inbound.messages.list", nil, nil, page.query(), &out, nil); err != nil {
		return nil, err
	}
	messages := make([]InboundMessage, len(out.Data))
	for i, raw := range out.Data {
		if err := messages[i].decode(raw); err != nil {
			return nil, err
		}
	}
	return &InboundMessagePage{Data: messages, NextCursor: out.NextCursor}, nil
}

// GetInboundMessage reads a received message and its payload.
func (c *Client) GetInboundMessage(ctx context.Context, id string) (*InboundMessage, error) {
	var raw json.RawMessage
	if err := c.call(ctx, "inbound.messages.get", []string{id}, nil, nil, &raw, nil); err != nil {
		return nil, err
	}
	var out InboundMessage
	if err := out.decode(raw); err != nil {
		return nil, err
	}
	return &out, nil
}

// decode reads the envelope's fields, and the whole object into Payload.
func (m *InboundMessage) decode(raw json.RawMessage) error {
	type envelope InboundMessage // without this method: no recursion
	err := json.Unmarshal(raw, (*envelope)(m))
	if err == nil {
		err = json.Unmarshal(raw, &m.Payload)
	}
	if err != nil {
		return &Error{Code: CodeInvalidResponse, Message: "the answer is not the JSON expected: " + err.Error()}
	}
	return nil
}

// InboundAttachment is an attachment of a received message, downloaded.
type InboundAttachment struct {
	// Filename is as the message named it (characters outside printable ASCII replaced by "_"),
	// or "attachment-<n>" when it had none.
	Filename string
	// ContentType is as Gatepost serves it: the part's own type.
	ContentType string
	Content     []byte
}

// GetInboundRaw answers a received message byte for byte as the inbound MX took it (message/rfc822).
func (c *Client) GetInboundRaw(ctx context.Context, id string) ([]byte, error) {
	var out download
	if err := c.call(ctx, "inbound.messages.raw", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.body, nil
}

// GetInboundAttachment answers attachment n (from 0, in the order of the message's attachments);
// an *Error not_found when the message has no such attachment.
func (c *Client) GetInboundAttachment(ctx context.Context, id string, n int) (*InboundAttachment, error) {
	var out download
	if err := c.call(ctx, "inbound.messages.attachment", []string{id, strconv.Itoa(n)}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	a := &InboundAttachment{ContentType: out.header.Get("Content-Type"), Content: out.body}
	if _, params, err := mime.ParseMediaType(out.header.Get("Content-Disposition")); err == nil {
		a.Filename = params["filename"]
	}
	return a, nil
}
