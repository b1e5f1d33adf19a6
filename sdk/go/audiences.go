package gatepost

import (
	"context"
	"encoding/json"
	"io"
	"os"
)

// Audience is a list of contacts broadcasts go to (docs/broadcasts.md).
type Audience struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Contacts counts its contacts, unsubscribed ones included.
	Contacts  int    `json:"contacts"`
	CreatedAt string `json:"created_at"`
}

// Contact is one address of an audience, with its merge variables.
type Contact struct {
	ID         string `json:"id"`
	AudienceID string `json:"audience_id"`
	// Email is in lower case.
	Email string         `json:"email"`
	Name  *string        `json:"name"`
	Data  map[string]any `json:"data"`
	// Unsubscribed: broadcasts skip the contact.
	Unsubscribed bool   `json:"unsubscribed"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

// ContactCreate is a contact to add.
type ContactCreate struct {
	Email        string         `json:"email"`
	Name         string         `json:"name,omitempty"`
	Data         map[string]any `json:"data,omitempty"`
	Unsubscribed bool           `json:"unsubscribed,omitempty"`
}

// ContactUpdate changes the fields set: nil leaves one as it is. ClearName removes the name;
// Data replaces the contact's whole.
type ContactUpdate struct {
	Email        *string
	Name         *string
	ClearName    bool
	Data         map[string]any
	Unsubscribed *bool
}

// MarshalJSON writes the fields to change, and a null name when ClearName is set.
func (u ContactUpdate) MarshalJSON() ([]byte, error) {
	changes := map[string]any{}
	if u.Email != nil {
		changes["email"] = *u.Email
	}
	if u.Name != nil {
		changes["name"] = *u.Name
	}
	if u.ClearName {
		changes["name"] = nil
	}
	if u.Data != nil {
		changes["data"] = u.Data
	}
	if u.Unsubscribed != nil {
		changes["unsubscribed"] = *u.Unsubscribed
	}
	return json.Marshal(changes)
}

// ContactPage is one page of an audience's contacts, by id; NextCursor is nil on the last.
type ContactPage struct {
	Data       []Contact `json:"data"`
	NextCursor *string   `json:"next_cursor"`
}

// RefusedRow is a row a CSV import refused: its number (the header is row 1), email and why.
type RefusedRow struct {
	Row    int    `json:"row"`
	Email  string `json:"email"`
	Reason string `json:"reason"`
}

// ImportReport is what a CSV import did: rows added and updated (by email), and those refused
// (Refused lists the first 100; RefusedCount counts them all).
type ImportReport struct {
	Added        int          `json:"added"`
	Updated      int          `json:"updated"`
	RefusedCount int          `json:"refused_count"`
	Refused      []RefusedRow `json:"refused"`
}

// CreateAudience makes an empty audience.
func (c *Client) CreateAudience(ctx context.Context, name string) (*Audience, error) {
	var out Audience
	body := struct {
		Name string `json:"name"`
	}{name}
	if err := c.call(ctx, "audiences.create", nil, body, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAudiences answers the tenant's audiences, oldest first.
func (c *Client) ListAudiences(ctx context.Context) ([]Audience, error) {
	var out struct {
		Data []Audience `json:"data"`
	}
	if err := c.call(ctx, "audiences.list", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// GetAudience reads an audience, with its number of contacts.
func (c *Client) GetAudience(ctx context.Context, id string) (*Audience, error) {
	var out Audience
	if err := c.call(ctx, "audiences.get", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteAudience deletes an audience and its contacts.
func (c *Client) DeleteAudience(ctx context.Context, id string) error {
	return c.call(ctx, "audiences.delete", []string{id}, nil, nil, nil, nil)
}

// AddContact adds a contact; an email the audience has already is Code "contact_exists" (409).
func (c *Client) AddContact(ctx context.Context, audienceID string, contact ContactCreate) (*Contact, error) {
	var out Contact
	if err := c.call(ctx, "contacts.add", []string{audienceID}, contact, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListContacts answers one page of an audience's contacts (Limit up to 1,000), by id.
func (c *Client) ListContacts(ctx context.Context, audienceID string, page ListOptions) (*ContactPage, error) {
	var out ContactPage
	if err := c.call(ctx, "contacts.list", []string{audienceID}, nil, page.query(), &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Contacts iterates over every contact of an audience, reading a page of pageSize (0: the
// server's default) at a time:
//
//	it := client.Contacts(audienceID, 500)
//	for it.Next(ctx) {
//		fmt.Println(it.Contact().Email)
//	}
//	if err := it.Err(); err != nil { … }
func (c *Client) Contacts(audienceID string, pageSize int) *ContactIterator {
	return &ContactIterator{client: c, audienceID: audienceID, pageSize: pageSize}
}

// ContactIterator walks an audience's pages by their next_cursor (see Client.Contacts).
type ContactIterator struct {
	client     *Client
	audienceID string
	pageSize   int
	page       []Contact
	cursor     *string
	started    bool
	current    Contact
	err        error
}

// Next moves to the next contact, reading the next page when this one is done; false at the
// end or on an error (Err says which).
func (it *ContactIterator) Next(ctx context.Context) bool {
	for len(it.page) == 0 {
		if it.err != nil || (it.started && it.cursor == nil) {
			return false
		}
		opts := ListOptions{Limit: it.pageSize}
		if it.cursor != nil {
			opts.Cursor = *it.cursor
		}
		page, err := it.client.ListContacts(ctx, it.audienceID, opts)
		if err != nil {
			it.err = err
			return false
		}
		it.page, it.cursor, it.started = page.Data, page.NextCursor, true
	}
	it.current, it.page = it.page[0], it.page[1:]
	return true
}

// Contact is the contact Next moved to.
func (it *ContactIterator) Contact() Contact { return it.current }

// Err is the error that ended the iteration, or nil when it reached the last contact.
func (it *ContactIterator) Err() error { return it.err }

// GetContact reads a contact by its id (con_…) or its email.
func (c *Client) GetContact(ctx context.Context, audienceID, contact string) (*Contact, error) {
	var out Contact
	if err := c.call(ctx, "contacts.get", []string{audienceID, contact}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateContact changes the fields set in changes; the contact is named by its id or its email.
func (c *Client) UpdateContact(ctx context.Context, audienceID, contact string, changes ContactUpdate) (*Contact, error) {
	var out Contact
	if err := c.call(ctx, "contacts.update", []string{audienceID, contact}, changes, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveContact removes a contact, named by its id or its email.
func (c *Client) RemoveContact(ctx context.Context, audienceID, contact string) error {
	return c.call(ctx, "contacts.remove", []string{audienceID, contact}, nil, nil, nil, nil)
}

// ImportContacts imports a CSV file read from csv: a header row naming email, then name,
// unsubscribed and any data columns. Bad rows are refused one by one in the report; a file that
// cannot be read is Code "csv_invalid" (422), and nothing of it is imported. An io.Seeker (an
// *os.File, a bytes.Reader) is sent again whole after a 429; any other reader is sent once.
func (c *Client) ImportContacts(ctx context.Context, audienceID string, csv io.Reader) (*ImportReport, error) {
	var out ImportReport
	if err := c.call(ctx, "contacts.import", []string{audienceID}, upload{"text/csv", csv}, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ImportContactsFile imports the CSV file at path, streamed from disk (see ImportContacts).
func (c *Client) ImportContactsFile(ctx context.Context, audienceID, path string) (*ImportReport, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return c.ImportContacts(ctx, audienceID, file)
}
