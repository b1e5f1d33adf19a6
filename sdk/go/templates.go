package gatepost

import "context"

// Template is a stored subject, html and text (Handlebars), by slug.
type Template struct {
	ID        string  `json:"id"`
	Slug      string  `json:"slug"`
	Name      *string `json:"name"`
	Subject   string  `json:"subject"`
	HTML      string  `json:"html"`
	Text      *string `json:"text"`
	From      *string `json:"from"`
	To        *string `json:"to"`
	ReplyTo   *string `json:"reply_to"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

// TemplateCreate is a new template: Slug, Subject and HTML are required.
type TemplateCreate struct {
	Slug    string `json:"slug"`
	Name    string `json:"name,omitempty"`
	Subject string `json:"subject"`
	HTML    string `json:"html"`
	Text    string `json:"text,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	ReplyTo string `json:"reply_to,omitempty"`
}

// TemplateUpdate changes the fields that are not nil.
type TemplateUpdate struct {
	Slug    *string `json:"slug,omitempty"`
	Name    *string `json:"name,omitempty"`
	Subject *string `json:"subject,omitempty"`
	HTML    *string `json:"html,omitempty"`
	Text    *string `json:"text,omitempty"`
	From    *string `json:"from,omitempty"`
	To      *string `json:"to,omitempty"`
	ReplyTo *string `json:"reply_to,omitempty"`
}

// String answers a pointer to s, for the optional fields of updates.
func String(s string) *string { return &s }

// CreateTemplate stores a template; a slug taken is an *Error with Code "template_exists".
func (c *Client) CreateTemplate(ctx context.Context, t TemplateCreate) (*Template, error) {
	var out Template
	if err := c.call(ctx, "templates.create", nil, t, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTemplates answers every template of the tenant, by slug.
func (c *Client) ListTemplates(ctx context.Context) ([]Template, error) {
	var out struct {
		Data []Template `json:"data"`
	}
	if err := c.call(ctx, "templates.list", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// GetTemplate reads a template by slug.
func (c *Client) GetTemplate(ctx context.Context, slug string) (*Template, error) {
	var out Template
	if err := c.call(ctx, "templates.get", []string{slug}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateTemplate changes a template's given fields.
func (c *Client) UpdateTemplate(ctx context.Context, slug string, changes TemplateUpdate) (*Template, error) {
	var out Template
	if err := c.call(ctx, "templates.update", []string{slug}, changes, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteTemplate deletes a template.
func (c *Client) DeleteTemplate(ctx context.Context, slug string) error {
	return c.call(ctx, "templates.delete", []string{slug}, nil, nil, nil, nil)
}
