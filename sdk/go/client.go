// Package gatepost is the Go client of Gatepost's native API: sending, messages and their
// timelines, the event feed, delivery receipts, templates, suppressions, webhooks, sending
// domains, inbound routes and received mail, reputation, the queue, audiences and their
// contacts; and, offline, the verification of webhook deliveries (VerifyWebhook) and of signed
// delivery receipts (VerifyReceipt). It uses the standard library alone.
package gatepost

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of a Client; each can be changed with an Option.
const (
	DefaultBaseURL     = "http://localhost:3000"
	DefaultTimeout     = 30 * time.Second
	DefaultMaxAttempts = 3
	// DefaultMaxRetryWait bounds one wait between attempts, Retry-After included: a 429 that
	// asks for longer (a daily quota used up) is answered to the caller at once.
	DefaultMaxRetryWait = 30 * time.Second
)

// Client calls Gatepost's API with one API key. It is safe for concurrent use.
type Client struct {
	baseURL      string
	apiKey       string
	http         *http.Client
	maxAttempts  int
	backoff      time.Duration
	maxRetryWait time.Duration
	userAgent    string
}

// Option changes a Client's defaults.
type Option func(*Client)

// WithBaseURL sets where Gatepost answers (default http://localhost:3000).
func WithBaseURL(u string) Option { return func(c *Client) { c.baseURL = strings.TrimRight(u, "/") } }

// WithHTTPClient replaces the http.Client (its Timeout bounds each attempt).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout bounds each attempt (default 30 s). The context bounds the whole call.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) { c.http = &http.Client{Timeout: d, Transport: c.http.Transport} }
}

// WithMaxAttempts sets how many times a retryable request is tried in all (default 3; 1: no retry).
func WithMaxAttempts(n int) Option {
	return func(c *Client) {
		if n < 1 {
			n = 1
		}
		c.maxAttempts = n
	}
}

// WithBackoff sets the first retry's base wait (default 500 ms), doubled at each retry, with jitter.
func WithBackoff(d time.Duration) Option { return func(c *Client) { c.backoff = d } }

// WithMaxRetryWait bounds one wait between attempts (default 30 s).
func WithMaxRetryWait(d time.Duration) Option { return func(c *Client) { c.maxRetryWait = d } }

// New makes a client with an API key (gp_live_…, gp_test_…).
func New(apiKey string, opts ...Option) *Client {
	c := &Client{
		baseURL:      DefaultBaseURL,
		apiKey:       apiKey,
		http:         &http.Client{Timeout: DefaultTimeout},
		maxAttempts:  DefaultMaxAttempts,
		backoff:      500 * time.Millisecond,
		maxRetryWait: DefaultMaxRetryWait,
		userAgent:    "gatepost-go/0.1.0",
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// RequestOption changes one call.
type RequestOption func(*requestOptions)

type requestOptions struct {
	idempotencyKey string
	// minTimeout lengthens the attempt's deadline for a request the server holds open (the event feed).
	minTimeout time.Duration
	// download: the answer is a file (any type), not JSON.
	download bool
}

// download receives an answer that is a file: its bytes and headers (call fills it in).
type download struct {
	body   []byte
	header http.Header
}

// WithIdempotencyKey sends the Idempotency-Key header: a repeat of the call with the same key
// answers the first call's result instead of acting again (kept 90 days per tenant).
func WithIdempotencyKey(key string) RequestOption {
	return func(o *requestOptions) { o.idempotencyKey = key }
}

// call makes the request of operation `name`, its path parameters filled in order, retrying as
// retryWait decides, and decodes a 2xx JSON answer into out (when not nil).
func (c *Client) call(ctx context.Context, name string, params []string, body any, query url.Values, out any, opts []RequestOption) error {
	op, ok := operationByName[name]
	if !ok {
		panic("gatepost: no operation " + name) // a bug of this package, never of its caller
	}
	var ro requestOptions
	for _, opt := range opts {
		opt(&ro)
	}
	file, isDownload := out.(*download)
	ro.download = isDownload
	path, err := fillPath(op.Path, params)
	if err != nil {
		return err
	}
	target := c.baseURL + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	p, err := payloadOf(body)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		status, header, answer, err := c.once(ctx, op.Method, target, p, ro)
		if err == nil && status >= 200 && status < 300 {
			if isDownload {
				file.body, file.header = answer, header
				return nil
			}
			if out == nil || status == http.StatusNoContent {
				return nil
			}
			if err := json.Unmarshal(answer, out); err != nil {
				return &Error{Code: CodeInvalidResponse, Status: status, Message: "the answer is not the JSON expected: " + err.Error()}
			}
			return nil
		}
		if err == nil {
			err = errorOf(status, header, answer)
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		wait, retry := c.retryWait(op.Method, ro.idempotencyKey != "", status, header, attempt)
		if !retry || !p.replayable {
			return err
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// once makes one attempt; err is a transport error (no answer). The answer is read whole.
func (c *Client) once(ctx context.Context, method, target string, p payload, ro requestOptions) (int, http.Header, []byte, error) {
	reader, length, err := p.open()
	if err != nil {
		return 0, nil, nil, fmt.Errorf("gatepost: reading the request body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("gatepost: %w", err)
	}
	req.ContentLength = length
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	if ro.download {
		req.Header.Set("Accept", "*/*")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", c.userAgent)
	if p.contentType != "" {
		req.Header.Set("Content-Type", p.contentType)
	}
	if ro.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", ro.idempotencyKey)
	}
	client := c.http
	if ro.minTimeout > client.Timeout && client.Timeout != 0 {
		longer := *client
		longer.Timeout = ro.minTimeout
		client = &longer
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("gatepost: %s %s: %w", method, target, err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("gatepost: reading the answer: %w", err)
	}
	return res.StatusCode, res.Header, answer, nil
}

// retryWait says whether to try again after attempt n, and after how long. A 429 was not acted
// on, so it is always retried; a 5xx or no answer at all may have been acted on, so only a
// request that is safe to repeat is retried: one without a body effect (GET, DELETE, PATCH sets
// fields) or one carrying an idempotency key (sends always carry one: see Send).
func (c *Client) retryWait(method string, idempotent bool, status int, header http.Header, n int) (time.Duration, bool) {
	if n >= c.maxAttempts {
		return 0, false
	}
	safe := method != http.MethodPost || idempotent
	switch {
	case status == http.StatusTooManyRequests:
	case (status >= 500 || status == 0) && safe:
	default:
		return 0, false
	}
	// Exponential backoff with full jitter (a random wait up to base·2^(n-1)).
	ceiling := float64(c.backoff) * math.Pow(2, float64(n-1))
	wait := time.Duration(jitter(int64(ceiling)))
	if after, ok := retryAfter(header); ok {
		if after > c.maxRetryWait {
			return 0, false
		}
		if after > wait {
			wait = after
		}
	}
	if wait > c.maxRetryWait {
		wait = c.maxRetryWait
	}
	return wait, true
}

// retryAfter reads Retry-After as seconds or as an HTTP date.
func retryAfter(header http.Header) (time.Duration, bool) {
	value := strings.TrimSpace(header.Get("Retry-After"))
	if value == "" {
		return 0, false
	}
	if seconds, err := strconv.Atoi(value); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second, true
	}
	if at, err := http.ParseTime(value); err == nil {
		d := time.Until(at)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// errorOf turns a non-2xx answer into an *Error: the coded body when there is one.
func errorOf(status int, header http.Header, answer []byte) *Error {
	var body struct {
		Error *Error `json:"error"`
	}
	e := &Error{Code: CodeInvalidResponse, Message: fmt.Sprintf("HTTP %d with no Gatepost error body", status)}
	if json.Unmarshal(answer, &body) == nil && body.Error != nil && body.Error.Code != "" {
		e = body.Error
	}
	e.Status = status
	if after, ok := retryAfter(header); ok {
		e.RetryAfter = int(after / time.Second)
	}
	return e
}

// fillPath puts each parameter, escaped, in the place of the template's {name}s, in order.
func fillPath(template string, params []string) (string, error) {
	var b strings.Builder
	rest := template
	for _, p := range params {
		open := strings.IndexByte(rest, '{')
		end := strings.IndexByte(rest, '}')
		if open < 0 || end < open {
			break
		}
		if p == "" {
			return "", &Error{Code: "invalid_request", Message: fmt.Sprintf("%s: %s must not be empty", template, rest[open+1:end])}
		}
		b.WriteString(rest[:open])
		b.WriteString(url.PathEscape(p))
		rest = rest[end+1:]
	}
	b.WriteString(rest)
	return b.String(), nil
}

// newIdempotencyKey makes a random key, so a send retried after no answer is not sent twice.
func newIdempotencyKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return ""
	}
	return "gp-go-" + hex.EncodeToString(b)
}

// jitter answers a random number in [0, n], from crypto/rand (math/rand is unseeded before Go 1.20).
func jitter(n int64) int64 {
	var b [8]byte
	if n <= 0 {
		return 0
	}
	if _, err := rand.Read(b[:]); err != nil {
		return n
	}
	return int64(binary.BigEndian.Uint64(b[:]) % uint64(n+1))
}
