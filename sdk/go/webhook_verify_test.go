package gatepost_test

import (
	"net/http"
	"testing"

	gatepost "github.com/gatepost/gatepost-go"
)

// The worked example of docs/webhooks.md, byte for byte.
func TestTheDocumentedSignature(t *testing.T) {
	body := `{"id":"evt_01","type":"email.sent","created_at":"2025-11-21T00:00:00.000Z","data":{"message_id":"msg_01"}}`
	got := gatepost.ComputeSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1763683200, []byte(body))
	if got != "bfa208a2905bc9f28aa5078ab83b81353775ecbf18fdc9a9fea53e5e5f4ea74a" {
		t.Fatalf("signature %s", got)
	}
	h := http.Header{}
	h.Set(gatepost.SignatureHeader, "t=abc,v1=zz")
	_, err := gatepost.VerifyWebhook([]byte(body), h, "whsec_x")
	wantReason(t, err, gatepost.ReasonMalformed)
}
