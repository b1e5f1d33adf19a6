// verifyWebhook on its own: fixed vectors (computed with `openssl dgst -sha256 -hmac`), several
// v1 values and several secrets, the five-minute tolerance both ways, and every refusal.
import { describe, expect, it } from 'vitest';
import { computeSignature, verifyWebhook, WebhookVerificationError } from './webhooks.ts';

const payload = '{"id":"evt_01","type":"email.sent","created_at":"2025-11-21T00:00:00.000Z","data":{"message_id":"msg_01"}}';
const t = 1763683200;
const now = t * 1000;
const secretA = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const secretB = 'whsec_plJ3nmyCDGBKInavdOK15jsl';
// printf '%s' "1763683200.$payload" | openssl dgst -sha256 -hmac "$secret"
const hexA = 'bfa208a2905bc9f28aa5078ab83b81353775ecbf18fdc9a9fea53e5e5f4ea74a';
const hexB = '2eda0285e6940827201e9d9ba6902fc2793689970b07cba78d00a94dedfade9f';

function reason(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).reason;
  }
  throw new Error('expected a verification failure');
}

describe('verifyWebhook', () => {
  it('computes the documented signature: hex HMAC-SHA256 of "<t>.<body>" keyed by the secret string', () => {
    expect(computeSignature(secretA, t, payload)).toBe(hexA);
    expect(computeSignature(secretB, String(t), Buffer.from(payload))).toBe(hexB);
  });

  it('answers the event when a v1 matches, from a plain object or a fetch Headers', () => {
    const event = verifyWebhook({ payload, headers: { 'X-Service-Signature': `t=${t},v1=${hexA}` }, secret: secretA, now });
    expect(event).toEqual({
      id: 'evt_01',
      type: 'email.sent',
      created_at: '2025-11-21T00:00:00.000Z',
      data: { message_id: 'msg_01' },
    });
    const headers = new Headers({ 'x-service-signature': `t=${t},v1=${hexA}` });
    expect(verifyWebhook({ payload: Buffer.from(payload), headers, secret: secretA, now }).id).toBe('evt_01');
  });

  it('accepts any of several v1 values, against any of several secrets (a rotation)', () => {
    const headers = { 'x-service-signature': `t=${t},v1=${hexB},v1=${hexA}` };
    expect(verifyWebhook({ payload, headers, secret: secretA, now }).id).toBe('evt_01');
    expect(verifyWebhook({ payload, headers, secret: secretB, now }).id).toBe('evt_01');
    expect(
      verifyWebhook({ payload, headers: { 'x-service-signature': `t=${t},v1=${hexB}` }, secret: [secretA, secretB], now }).id,
    ).toBe('evt_01');
  });

  it('refuses a timestamp more than five minutes away, either way, and takes a tolerance', () => {
    const headers = { 'x-service-signature': `t=${t},v1=${hexA}` };
    expect(verifyWebhook({ payload, headers, secret: secretA, now: now + 300_000 }).id).toBe('evt_01');
    expect(verifyWebhook({ payload, headers, secret: secretA, now: now - 300_000 }).id).toBe('evt_01');
    expect(reason(() => verifyWebhook({ payload, headers, secret: secretA, now: now + 301_000 }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(reason(() => verifyWebhook({ payload, headers, secret: secretA, now: now - 301_000 }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(verifyWebhook({ payload, headers, secret: secretA, now: now + 600_000, toleranceSeconds: 600 }).id).toBe('evt_01');
  });

  it('refuses a changed body, a wrong secret, a missing or malformed header, and a body that is not JSON', () => {
    const headers = { 'x-service-signature': `t=${t},v1=${hexA}` };
    expect(reason(() => verifyWebhook({ payload: payload.replace('msg_01', 'msg_02'), headers, secret: secretA, now }))).toBe(
      'no_matching_signature',
    );
    expect(reason(() => verifyWebhook({ payload, headers, secret: secretB, now }))).toBe('no_matching_signature');
    // The timestamp is signed: moving it breaks the signature.
    expect(
      reason(() => verifyWebhook({ payload, headers: { 'x-service-signature': `t=${t + 1},v1=${hexA}` }, secret: secretA, now })),
    ).toBe('no_matching_signature');
    expect(reason(() => verifyWebhook({ payload, headers: {}, secret: secretA, now }))).toBe('missing_signature');
    for (const bad of [`v1=${hexA}`, `t=${t}`, `t=abc,v1=${hexA}`, `t=${t},v1=zz`, `t=${t},v0=${hexA}`]) {
      expect(reason(() => verifyWebhook({ payload, headers: { 'x-service-signature': bad }, secret: secretA, now }))).toBe(
        'malformed_signature',
      );
    }
    const text = 'not json';
    const sig = computeSignature(secretA, t, text);
    expect(
      reason(() =>
        verifyWebhook({ payload: text, headers: { 'x-service-signature': `t=${t},v1=${sig}` }, secret: secretA, now }),
      ),
    ).toBe('invalid_payload');
  });
});
