package gatepost

import "context"

// CapturedMessage is a sandbox send as it would have gone out: rendered, never delivered.
type CapturedMessage struct {
	MessageID  string            `json:"message_id"`
	From       string            `json:"from"`
	To         string            `json:"to"`
	Subject    string            `json:"subject"`
	HTML       string            `json:"html"`
	Text       string            `json:"text"`
	Headers    map[string]string `json:"headers"`
	CapturedAt string            `json:"captured_at"`
}

// CapturedPage is one page of captured messages, newest first; NextCursor is nil on the last.
type CapturedPage struct {
	Data       []CapturedMessage `json:"data"`
	NextCursor *string           `json:"next_cursor"`
}

// ListCaptured answers a page of the sandbox inbox: what sandbox keys sent, newest first.
func (c *Client) ListCaptured(ctx context.Context, page ListOptions) (*CapturedPage, error) {
	var out CapturedPage
	if err := c.call(ctx, "sandbox.list", nil, nil, page.query(), &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetCaptured reads one captured sandbox message by its message id.
func (c *Client) GetCaptured(ctx context.Context, messageID string) (*CapturedMessage, error) {
	var out CapturedMessage
	if err := c.call(ctx, "sandbox.get", []string{messageID}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}
