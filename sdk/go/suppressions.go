package gatepost

import (
	"context"
	"net/url"
	"strconv"
)

// Suppression is an address the tenant will not send to, and why.
type Suppression struct {
	Address   string  `json:"address"`
	Reason    string  `json:"reason"`
	Detail    *string `json:"detail"`
	CreatedAt string  `json:"created_at"`
}

// SuppressionCreate suppresses an address; Reason is manual (the default), unsubscribe or complaint.
type SuppressionCreate struct {
	Address string `json:"address"`
	Reason  string `json:"reason,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// SuppressionPage is one page of the list; NextCursor is nil on the last.
type SuppressionPage struct {
	Data       []Suppression `json:"data"`
	NextCursor *string       `json:"next_cursor"`
}

// ListOptions pages a list: Limit (1–1000, default 100) and the Cursor of the page before.
type ListOptions struct {
	Limit  int
	Cursor string
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// Suppress adds an address to the suppression list (an existing entry keeps its first reason).
func (c *Client) Suppress(ctx context.Context, s SuppressionCreate) (*Suppression, error) {
	var out Suppression
	if err := c.call(ctx, "suppressions.create", nil, s, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSuppressions answers one page of suppressions, by address.
func (c *Client) ListSuppressions(ctx context.Context, page ListOptions) (*SuppressionPage, error) {
	var out SuppressionPage
	if err := c.call(ctx, "suppressions.list", nil, nil, page.query(), &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetSuppression answers the suppression of an address; not suppressed is Code "not_found".
func (c *Client) GetSuppression(ctx context.Context, address string) (*Suppression, error) {
	var out Suppression
	if err := c.call(ctx, "suppressions.get", []string{address}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Unsuppress removes an address from the list; not suppressed is Code "not_found".
func (c *Client) Unsuppress(ctx context.Context, address string) error {
	return c.call(ctx, "suppressions.delete", []string{address}, nil, nil, nil, nil)
}
