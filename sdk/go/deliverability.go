package gatepost

import "context"

// BreakerWindow is what a reputation breaker counted over its rolling window.
type BreakerWindow struct {
	Sample        int     `json:"sample"`
	Sent          int     `json:"sent"`
	HardBounces   int     `json:"hard_bounces"`
	Blocks        int     `json:"blocks"`
	Complaints    int     `json:"complaints"`
	BounceRate    float64 `json:"bounce_rate"`
	ComplaintRate float64 `json:"complaint_rate"`
	BlockRate     float64 `json:"block_rate"`
}

// Breaker is a reputation breaker: closed (mail goes as usual), warning, open (broadcasts wait,
// transactional mail goes at a trickle) or half_open.
type Breaker struct {
	Status     string        `json:"status"`
	Since      string        `json:"since"`
	Reason     *string       `json:"reason"`
	Window     BreakerWindow `json:"window"`
	HalfOpenAt *string       `json:"half_open_at"`
}

// DomainBreaker is a sending domain's breaker.
type DomainBreaker struct {
	Breaker
	Domain string `json:"domain"`
}

// Reputation is the tenant's breaker and each of its sending domains'.
type Reputation struct {
	Breaker
	Domains []DomainBreaker `json:"domains"`
}

// QueueEntry is the tenant's mail waiting for one destination's delivery slots.
type QueueEntry struct {
	TenantID         string  `json:"tenant_id"`
	Destination      string  `json:"destination"`
	Waiting          int     `json:"waiting"`
	InFlight         int     `json:"in_flight"`
	OldestAgeSeconds float64 `json:"oldest_age_seconds"`
}

// Report is a bounce or complaint received at a return-path domain, recognised or not.
type Report struct {
	ID            string         `json:"id"`
	Rcpt          string         `json:"rcpt"`
	MailFrom      string         `json:"mail_from"`
	RemoteAddress string         `json:"remote_address"`
	ReceivedAt    string         `json:"received_at"`
	Kind          string         `json:"kind"`
	Outcome       string         `json:"outcome"`
	MessageID     *string        `json:"message_id"`
	Reason        *string        `json:"reason"`
	Findings      map[string]any `json:"findings"`
	Excerpt       *string        `json:"excerpt"`
	Size          int            `json:"size"`
}

// ReportPage is one page of reports, newest first; NextCursor is nil on the last.
type ReportPage struct {
	Data       []Report `json:"data"`
	NextCursor *string  `json:"next_cursor"`
}

// GetReputation reads the tenant's reputation breakers and the rates of their windows.
func (c *Client) GetReputation(ctx context.Context) (*Reputation, error) {
	var out Reputation
	if err := c.call(ctx, "reputation.get", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetQueue answers the tenant's mail in the fair queue, per destination.
func (c *Client) GetQueue(ctx context.Context) ([]QueueEntry, error) {
	var out struct {
		Data []QueueEntry `json:"data"`
	}
	if err := c.call(ctx, "queue.get", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// ListReports answers a page of the bounces and complaints received, newest first.
func (c *Client) ListReports(ctx context.Context, page ListOptions) (*ReportPage, error) {
	var out ReportPage
	if err := c.call(ctx, "reports.list", nil, nil, page.query(), &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}
