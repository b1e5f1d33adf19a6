package gatepost

import "context"

// DNSRecord is one record to publish for a sending domain, and what the last check found.
type DNSRecord struct {
	Purpose  string   `json:"purpose"`
	Type     string   `json:"type"`
	Name     string   `json:"name"`
	Value    string   `json:"value"`
	Priority *int     `json:"priority,omitempty"`
	Required bool     `json:"required"`
	Status   string   `json:"status"`
	Found    []string `json:"found"`
	Error    *string  `json:"error"`
}

// Domain is a sending domain and its DNS records.
type Domain struct {
	ID      string      `json:"id"`
	Name    string      `json:"name"`
	Status  string      `json:"status"`
	Records []DNSRecord `json:"records"`
	// TrackingHost is the host its tracked links use once its CNAME is verified; nil: none.
	TrackingHost *string `json:"tracking_host"`
	CheckedAt    *string `json:"checked_at"`
	VerifiedAt   *string `json:"verified_at"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
}

// CreateDomain adds a sending domain, pending, with the DNS records to publish.
func (c *Client) CreateDomain(ctx context.Context, name string) (*Domain, error) {
	var out Domain
	body := struct {
		Name string `json:"name"`
	}{name}
	if err := c.call(ctx, "domains.create", nil, body, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetTrackingHost names the host the domain's tracked links use (a host under the domain), or
// none (nil); its CNAME record is pending until the next verification. A host elsewhere is Code
// "tracking_host_invalid" (422).
func (c *Client) SetTrackingHost(ctx context.Context, id string, host *string) (*Domain, error) {
	var out Domain
	body := struct {
		TrackingHost *string `json:"tracking_host"`
	}{host}
	if err := c.call(ctx, "domains.update", []string{id}, body, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListDomains answers the tenant's sending domains, oldest first.
func (c *Client) ListDomains(ctx context.Context) ([]Domain, error) {
	var out struct {
		Data []Domain `json:"data"`
	}
	if err := c.call(ctx, "domains.list", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// GetDomain reads a domain and its records as last checked.
func (c *Client) GetDomain(ctx context.Context, id string) (*Domain, error) {
	var out Domain
	if err := c.call(ctx, "domains.get", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// VerifyDomain looks every record up now and answers what each showed; the domain is verified
// when both DKIM records and SPF match.
func (c *Client) VerifyDomain(ctx context.Context, id string) (*Domain, error) {
	var out Domain
	if err := c.call(ctx, "domains.verify", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteDomain deletes a sending domain.
func (c *Client) DeleteDomain(ctx context.Context, id string) error {
	return c.call(ctx, "domains.delete", []string{id}, nil, nil, nil, nil)
}
