package gatepost

import (
	"errors"
	"fmt"
)

// ErrorDetail names one field at fault in an invalid_request.
type ErrorDetail struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is a refusal answered by Gatepost: its stable code (docs/errors.md), the HTTP status and
// the message. Branch on Code:
//
//	var apiErr *gatepost.Error
//	if errors.As(err, &apiErr) && apiErr.Code == "recipient_suppressed" { … }
type Error struct {
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Details []ErrorDetail `json:"details,omitempty"`
	// Status is the HTTP status of the answer.
	Status int `json:"-"`
	// RetryAfter is the Retry-After header of a 429 or 503, in seconds; 0 when absent.
	RetryAfter int `json:"-"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("gatepost: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsCode reports whether err is (or wraps) a Gatepost *Error with this code.
func IsCode(err error, code string) bool {
	var apiErr *Error
	return errors.As(err, &apiErr) && apiErr.Code == code
}

// Codes the client gives answers that carry no coded error body (a proxy's page, a cut body).
const (
	// CodeInvalidResponse: the server answered something that is not Gatepost's JSON.
	CodeInvalidResponse = "invalid_response"
)
