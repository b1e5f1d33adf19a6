package gatepost

import "context"

// AutomationTrigger starts an automation's runs (docs/automations.md#triggers): Type
// contact_added; email_event with Event (email.opened, …); or custom_event with Name.
type AutomationTrigger struct {
	Type  string `json:"type"`
	Event string `json:"event,omitempty"`
	Name  string `json:"name,omitempty"`
}

// AutomationStep is one step: Type wait (Duration: an ISO 8601 duration such as "PT10M", or a
// number of seconds), send (Template, From, Subject) or if (Opened or Clicked naming an earlier
// send step, Then and Else a step's id or "end").
type AutomationStep struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Duration any    `json:"duration,omitempty"`
	// Seconds is answered for a wait: its duration in seconds (never sent).
	Seconds  int    `json:"seconds,omitempty"`
	Template string `json:"template,omitempty"`
	From     string `json:"from,omitempty"`
	Subject  string `json:"subject,omitempty"`
	Opened   string `json:"opened,omitempty"`
	Clicked  string `json:"clicked,omitempty"`
	Then     string `json:"then,omitempty"`
	Else     string `json:"else,omitempty"`
}

// AutomationCreate is an automation as written; Sandbox captures every send in the sandbox inbox.
type AutomationCreate struct {
	Name       string            `json:"name"`
	AudienceID string            `json:"audience_id"`
	Trigger    AutomationTrigger `json:"trigger"`
	Steps      []AutomationStep  `json:"steps"`
	Sandbox    bool              `json:"sandbox,omitempty"`
}

// Automation is a sequence of steps run per contact of an audience.
type Automation struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	AudienceID string            `json:"audience_id"`
	Trigger    AutomationTrigger `json:"trigger"`
	Steps      []AutomationStep  `json:"steps"`
	Sandbox    bool              `json:"sandbox"`
	Enabled    bool              `json:"enabled"`
	CreatedAt  string            `json:"created_at"`
	UpdatedAt  string            `json:"updated_at"`
}

// AutomationUpdate renames an automation or enables or disables it; nil leaves a field as it is.
type AutomationUpdate struct {
	Name    *string `json:"name,omitempty"`
	Enabled *bool   `json:"enabled,omitempty"`
}

// AutomationRun is one run of an automation for a contact. Trigger, Data and Timeline are
// answered when it is read one by one (GetAutomationRun), not listed.
type AutomationRun struct {
	ID           string `json:"id"`
	AutomationID string `json:"automation_id"`
	ContactID    string `json:"contact_id"`
	Email        string `json:"email"`
	// Status is running, waiting, completed, stopped or failed.
	Status string `json:"status"`
	// Reason says why it stopped or failed.
	Reason    *string `json:"reason"`
	StartedAt string  `json:"started_at"`
	UpdatedAt string  `json:"updated_at"`
	Trigger   *struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
		Name    string `json:"name,omitempty"`
	} `json:"trigger,omitempty"`
	Data     map[string]any       `json:"data,omitempty"`
	Timeline []AutomationRunEntry `json:"timeline,omitempty"`
}

// AutomationRunEntry is one entry of a run's timeline: run.started, step.waiting, step.sent
// (Data["message_id"]), step.condition, run.completed, run.stopped or run.failed.
type AutomationRunEntry struct {
	At   string         `json:"at"`
	Type string         `json:"type"`
	Step *string        `json:"step"`
	Data map[string]any `json:"data"`
}

// AutomationRunPage is one page of an automation's runs, newest first; NextCursor is nil on the last.
type AutomationRunPage struct {
	Data       []AutomationRun `json:"data"`
	NextCursor *string         `json:"next_cursor"`
}

// CustomEvent is an event of your application about a contact (its Email): it starts the runs
// of the enabled automations its Name triggers. The same IdempotencyKey again starts nothing.
type CustomEvent struct {
	Name           string         `json:"name"`
	Email          string         `json:"email"`
	Data           map[string]any `json:"data,omitempty"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
}

// PostedEvent is a custom event's id and the runs it started (none for a repeat).
type PostedEvent struct {
	ID   string   `json:"id"`
	Runs []string `json:"runs"`
}

// CreateAutomation makes an automation, enabled; it is checked whole first (an *Error
// automation_cycle, automation_step_unknown, …) and a refusal creates nothing.
func (c *Client) CreateAutomation(ctx context.Context, a AutomationCreate) (*Automation, error) {
	var out Automation
	if err := c.call(ctx, "automations.create", nil, a, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAutomations answers every automation of the tenant, oldest first.
func (c *Client) ListAutomations(ctx context.Context) ([]Automation, error) {
	var out struct {
		Data []Automation `json:"data"`
	}
	if err := c.call(ctx, "automations.list", nil, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// GetAutomation reads one automation.
func (c *Client) GetAutomation(ctx context.Context, id string) (*Automation, error) {
	var out Automation
	if err := c.call(ctx, "automations.get", []string{id}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateAutomation renames an automation, or disables it (its runs stop at their next step) or enables it again.
func (c *Client) UpdateAutomation(ctx context.Context, id string, changes AutomationUpdate) (*Automation, error) {
	var out Automation
	if err := c.call(ctx, "automations.update", []string{id}, changes, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteAutomation deletes an automation and its list of runs; its runs stop at their next step.
func (c *Client) DeleteAutomation(ctx context.Context, id string) error {
	return c.call(ctx, "automations.delete", []string{id}, nil, nil, nil, nil)
}

// ListAutomationRuns answers a page of an automation's runs, newest first.
func (c *Client) ListAutomationRuns(ctx context.Context, id string, page ListOptions) (*AutomationRunPage, error) {
	var out AutomationRunPage
	if err := c.call(ctx, "automations.runs", []string{id}, nil, page.query(), &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetAutomationRun reads one run with its timeline.
func (c *Client) GetAutomationRun(ctx context.Context, id, runID string) (*AutomationRun, error) {
	var out AutomationRun
	if err := c.call(ctx, "automations.run", []string{id, runID}, nil, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// SendEvent posts a custom event: it starts a run of each enabled automation triggered by its
// name whose audience has the contact; an *Error contact_not_found when none has.
func (c *Client) SendEvent(ctx context.Context, e CustomEvent) (*PostedEvent, error) {
	var out PostedEvent
	if err := c.call(ctx, "events.send", nil, e, nil, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}
