package gatepost

// Verifying Gatepost's signed delivery receipts, with no call to Gatepost (docs/receipts.md): a
// receipt is a compact JWS, EdDSA over Ed25519, checked against the operator's JWK Set
// (GET /.well-known/jwks.json, or Client.JWKS). crypto/ed25519 verifies it: no JOSE library.

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ReceiptTyp is the JWS typ of a receipt.
const ReceiptTyp = "gatepost-receipt+jws"

// JWK is one public key of the operator's JWK Set (OKP, Ed25519).
type JWK struct {
	Kid string `json:"kid"`
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Alg string `json:"alg,omitempty"`
}

// JWKS is the operator's JWK Set: the keys receipts are verified with, current and retired.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// ReceiptClaims is a receipt's payload.
type ReceiptClaims struct {
	ID              string  `json:"id"`
	TenantID        string  `json:"tenant_id"`
	Seq             int64   `json:"seq"`
	Prev            *string `json:"prev"`
	MessageID       string  `json:"message_id"`
	MessageIDHeader string  `json:"message_id_header"`
	Attempt         int     `json:"attempt"`
	// SHA256 is the lowercase hex SHA-256 of the exact bytes handed over.
	SHA256 string `json:"sha256"`
	DKIM   *struct {
		D string   `json:"d"`
		S []string `json:"s"`
	} `json:"dkim"`
	Envelope struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"envelope"`
	MX  *string `json:"mx"`
	IP  *string `json:"ip"`
	TLS *struct {
		Version string `json:"version"`
		Cipher  string `json:"cipher"`
	} `json:"tls"`
	Reply struct {
		Code     *int    `json:"code"`
		Enhanced *string `json:"enhanced"`
		Text     string  `json:"text"`
	} `json:"reply"`
	ConnectedAt *string `json:"connected_at"`
	AcceptedAt  *string `json:"accepted_at"`
	IssuedAt    string  `json:"issued_at"`
}

// Reasons a ReceiptVerificationError gives: of one receipt, then of the links of a chain.
const (
	ReceiptMalformed        = "malformed"
	ReceiptUnknownKey       = "unknown_key"
	ReceiptInvalidSignature = "invalid_signature"
	ReceiptTenantMismatch   = "tenant_mismatch"
	ReceiptOutOfOrder       = "out_of_order"
	ReceiptSequenceGap      = "sequence_gap"
	ReceiptChainBroken      = "chain_broken"
)

// ReceiptVerificationError says why a receipt is refused; in a chain, Index is its position.
type ReceiptVerificationError struct {
	Reason  string
	Message string
	Index   int
}

func (e *ReceiptVerificationError) Error() string { return "gatepost receipt: " + e.Message }

func malformed(msg string) error {
	return &ReceiptVerificationError{Reason: ReceiptMalformed, Message: msg}
}

// VerifyReceipt checks a receipt's signature against the JWK Set and answers its claims, or a
// *ReceiptVerificationError when it is not a receipt, names no key of the set, or its signature
// does not match.
func VerifyReceipt(jws string, jwks *JWKS) (*ReceiptClaims, error) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, malformed("not a compact JWS (three base64url parts)")
	}
	rawHeader, errH := base64.RawURLEncoding.DecodeString(parts[0])
	payload, errP := base64.RawURLEncoding.DecodeString(parts[1])
	signature, errS := base64.RawURLEncoding.DecodeString(parts[2])
	if errH != nil || errP != nil || errS != nil {
		return nil, malformed("a part is not unpadded base64url")
	}
	var header struct {
		Alg  string   `json:"alg"`
		Kid  string   `json:"kid"`
		Typ  string   `json:"typ"`
		Crit []string `json:"crit"`
	}
	if err := json.Unmarshal(rawHeader, &header); err != nil {
		return nil, malformed("the JWS header is not JSON")
	}
	if header.Alg != "EdDSA" || len(header.Crit) > 0 {
		return nil, malformed(`the JWS alg is not "EdDSA"`)
	}
	var key ed25519.PublicKey
	matches := 0
	if jwks != nil {
		for _, k := range jwks.Keys {
			if k.Kid != header.Kid || k.Kty != "OKP" || k.Crv != "Ed25519" {
				continue
			}
			x, err := base64.RawURLEncoding.DecodeString(k.X)
			if err != nil || len(x) != ed25519.PublicKeySize {
				continue
			}
			key, matches = ed25519.PublicKey(x), matches+1
		}
	}
	if matches != 1 {
		return nil, &ReceiptVerificationError{Reason: ReceiptUnknownKey, Message: "the receipt names no single key of the JWK Set"}
	}
	if !ed25519.Verify(key, []byte(parts[0]+"."+parts[1]), signature) {
		return nil, &ReceiptVerificationError{Reason: ReceiptInvalidSignature, Message: "the receipt signature does not match"}
	}
	if header.Typ != ReceiptTyp {
		return nil, malformed(`its typ is not "` + ReceiptTyp + `"`)
	}
	return claimsOf(payload)
}

func claimsOf(payload []byte) (*ReceiptClaims, error) {
	var c ReceiptClaims
	if !utf8.Valid(payload) || json.Unmarshal(payload, &c) != nil {
		return nil, malformed("the receipt payload is not JSON")
	}
	ok := strings.HasPrefix(c.ID, "rcp_") && c.TenantID != "" && c.Seq >= 1 &&
		(c.Prev == nil || hex64.MatchString(*c.Prev)) && (c.Seq == 1) == (c.Prev == nil) &&
		hex64.MatchString(c.SHA256)
	if !ok {
		return nil, malformed("the receipt payload does not have the fields of a receipt")
	}
	return &c, nil
}

// ReceiptHash answers a receipt's chain hash: the lowercase hex SHA-256 of its payload bytes.
// The tenant's next receipt carries it as Prev.
func ReceiptHash(jws string) string {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	sum := sha256.Sum256(payload)
	return hex.EncodeToString(sum[:])
}

// VerifyReceiptChain verifies each receipt (VerifyReceipt) and the links between them: receipts
// of one tenant, in order of Seq, consecutive, each Prev the chain hash of the one before. So a
// receipt changed, deleted from the middle or moved is found; one removed after the last given
// cannot be. Answers the claims, in order.
func VerifyReceiptChain(receipts []string, jwks *JWKS) ([]*ReceiptClaims, error) {
	out := make([]*ReceiptClaims, 0, len(receipts))
	for i, jws := range receipts {
		claims, err := VerifyReceipt(jws, jwks)
		if err != nil {
			e := err.(*ReceiptVerificationError)
			return nil, &ReceiptVerificationError{Reason: e.Reason, Message: fmt.Sprintf("receipt %d: %s", i, e.Message), Index: i}
		}
		if i > 0 {
			before := out[i-1]
			fail := func(reason, msg string) error {
				return &ReceiptVerificationError{Reason: reason, Message: msg, Index: i}
			}
			switch {
			case claims.TenantID != before.TenantID:
				return nil, fail(ReceiptTenantMismatch, fmt.Sprintf("receipt %d is of another tenant than receipt %d", i, i-1))
			case claims.Seq <= before.Seq:
				return nil, fail(ReceiptOutOfOrder, fmt.Sprintf("receipt %d (seq %d) comes after seq %d", i, claims.Seq, before.Seq))
			case claims.Seq != before.Seq+1:
				return nil, fail(ReceiptSequenceGap, fmt.Sprintf("%d receipt(s) missing between seq %d and seq %d", claims.Seq-before.Seq-1, before.Seq, claims.Seq))
			case *claims.Prev != ReceiptHash(receipts[i-1]):
				return nil, fail(ReceiptChainBroken, fmt.Sprintf("receipt %d does not link to receipt %d", i, i-1))
			}
		}
		out = append(out, claims)
	}
	return out, nil
}
