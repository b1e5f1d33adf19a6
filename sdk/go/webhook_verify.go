package gatepost

// Verifying a webhook delivery on the receiving side, with no call to Gatepost
// (docs/webhooks.md, "The signature, byte for byte"):
//
//	x-service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]
//	v1 = hex(HMAC-SHA256(key = the secret as given, "whsec_…"; message = "<t>.<raw body>"))
//
// Several v1 values appear while a secret rotates: any one matching any secret is enough. A
// timestamp more than the tolerance (five minutes) from now is refused, so a captured delivery
// cannot be replayed later.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a delivery's signatures.
const SignatureHeader = "X-Service-Signature"

// DefaultTolerance is how far a delivery's timestamp may be from now.
const DefaultTolerance = 5 * time.Minute

// Reasons a WebhookVerificationError gives.
const (
	ReasonMissingSignature = "missing_signature"
	ReasonMalformed        = "malformed_signature"
	ReasonOutOfTolerance   = "timestamp_out_of_tolerance"
	ReasonNoMatch          = "no_matching_signature"
	ReasonInvalidPayload   = "invalid_payload"
)

// WebhookVerificationError says why a delivery is refused.
type WebhookVerificationError struct {
	Reason  string
	Message string
}

func (e *WebhookVerificationError) Error() string { return "gatepost webhook: " + e.Message }

// WebhookVerifier checks deliveries against one or more secrets (old and new while rotating).
type WebhookVerifier struct {
	Secrets []string
	// Tolerance defaults to DefaultTolerance.
	Tolerance time.Duration
	// Now defaults to time.Now (tests give another clock).
	Now func() time.Time
}

// VerifyWebhook checks a delivery's signature with one secret and answers the event it carries.
// payload is the raw request body, byte for byte as received (read it before any JSON parsing).
func VerifyWebhook(payload []byte, headers http.Header, secret string) (*Event, error) {
	return WebhookVerifier{Secrets: []string{secret}}.Verify(payload, headers)
}

// ComputeSignature answers the hex HMAC-SHA256 of "<t>.<payload>" under secret: what v1 holds.
func ComputeSignature(secret string, timestamp int64, payload []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", timestamp)
	mac.Write(payload)
	return hex.EncodeToString(mac.Sum(nil))
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Verify checks a delivery and answers its event, or a *WebhookVerificationError.
func (v WebhookVerifier) Verify(payload []byte, headers http.Header) (*Event, error) {
	value := strings.Join(headers.Values(SignatureHeader), ",")
	if value == "" {
		return nil, &WebhookVerificationError{ReasonMissingSignature, "no " + SignatureHeader + " header"}
	}
	var t int64 = -1
	var given [][]byte
	for _, part := range strings.Split(value, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case k == "t":
			if n, err := strconv.ParseInt(val, 10, 64); err == nil && n >= 0 {
				t = n
			}
		case k == "v1" && hex64.MatchString(val):
			b, _ := hex.DecodeString(val)
			given = append(given, b)
		}
	}
	if t < 0 || len(given) == 0 {
		return nil, &WebhookVerificationError{ReasonMalformed, SignatureHeader + ` must be "t=<unix>,v1=<hex>[,v1=<hex>]"`}
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	tolerance := v.Tolerance
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	skew := now().Unix() - t
	if skew < 0 {
		skew = -skew
	}
	if skew > int64(tolerance/time.Second) {
		return nil, &WebhookVerificationError{ReasonOutOfTolerance, fmt.Sprintf("the timestamp %d is more than %s from now", t, tolerance)}
	}
	match := false
	// Every pair is compared (no early exit), each in constant time.
	for _, secret := range v.Secrets {
		expected, _ := hex.DecodeString(ComputeSignature(secret, t, payload))
		for _, g := range given {
			if hmac.Equal(expected, g) {
				match = true
			}
		}
	}
	if !match {
		return nil, &WebhookVerificationError{ReasonNoMatch, "no v1 signature matches the secret"}
	}
	var event Event
	if err := json.Unmarshal(payload, &event); err != nil {
		return nil, &WebhookVerificationError{ReasonInvalidPayload, "the signed payload is not JSON"}
	}
	return &event, nil
}
