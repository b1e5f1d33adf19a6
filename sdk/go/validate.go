package gatepost

import "context"

// Validation is the verdict on one address (docs/validate.md): Result is deliverable,
// undeliverable, risky or unknown; Reasons say why, as codes.
type Validation struct {
	Address    string           `json:"address"`
	Result     string           `json:"result"`
	Reasons    []string         `json:"reasons"`
	Checks     ValidationChecks `json:"checks"`
	Suggestion *string          `json:"suggestion"`
}

// ValidationChecks holds each finding; nil where it was not made (after a syntax failure, or
// when DNS did not answer).
type ValidationChecks struct {
	Syntax       bool  `json:"syntax"`
	Domain       *bool `json:"domain"`
	MX           *bool `json:"mx"`
	NullMX       *bool `json:"null_mx"`
	Disposable   *bool `json:"disposable"`
	Role         *bool `json:"role"`
	FreeProvider *bool `json:"free_provider"`
	Suppressed   *bool `json:"suppressed"`
}

// Validate checks an address before a send; an invalid address is a verdict, not an error.
func (c *Client) Validate(ctx context.Context, address string) (*Validation, error) {
	var out Validation
	if err := c.call(ctx, "validate", nil, map[string]string{"address": address}, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ValidateBatch checks up to 1,000 addresses: one verdict each, in order.
func (c *Client) ValidateBatch(ctx context.Context, addresses []string) ([]Validation, error) {
	var out struct {
		Results []Validation `json:"results"`
	}
	if err := c.call(ctx, "validate.batch", nil, map[string][]string{"addresses": addresses}, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Results, nil
}
