// What Gatepost signs, checked by implementations that are not Gatepost's: the standardwebhooks
// package as it is (webhook-* headers, with the secret exactly as handed out), node:crypto by
// hand for x-service-signature, and the SDK's verifyWebhook.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../sdk/node/webhooks.ts';
import { newSecret, signatureHeaders } from './webhook.signing.ts';

const body = JSON.stringify({
  id: 'evt_0abc',
  type: 'email.sent',
  created_at: '2026-11-21T10:00:00.000Z',
  data: { message_id: 'msg_0abc', to: 'ann@example.com', note: 'ünïcödé ✓' },
});

describe('signatureHeaders', () => {
  it('makes secrets of whsec_ and 32 base64 characters (24 bytes)', () => {
    const s = newSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(24);
    expect(newSecret()).not.toBe(s);
  });

  it('signs so that standardwebhooks, node:crypto and the SDK all verify', () => {
    const secret = newSecret();
    const t = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders({ eventId: 'evt_0abc', eventType: 'email.sent', body, secrets: [secret], timestamp: t });
    expect(headers['x-service-timestamp']).toBe(String(t));
    expect(headers['x-service-event']).toBe('email.sent');
    expect(headers['webhook-id']).toBe('evt_0abc');
    expect(headers['webhook-timestamp']).toBe(String(t));

    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));

    const hex = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(Buffer.from(`${t}.${body}`, 'utf8'))
      .digest('hex');
    expect(headers['x-service-signature']).toBe(`t=${t},v1=${hex}`);

    expect(verifyWebhook({ payload: body, headers, secret })).toEqual(JSON.parse(body));
  });

  it('matches the worked example of docs/webhooks.md byte for byte', () => {
    const example = '{"id":"evt_01","type":"email.sent","created_at":"2025-11-21T00:00:00.000Z","data":{"message_id":"msg_01"}}';
    expect(
      signatureHeaders({
        eventId: 'evt_01',
        eventType: 'email.sent',
        body: example,
        secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
        timestamp: 1763683200,
      }),
    ).toEqual({
      'x-service-signature': 't=1763683200,v1=bfa208a2905bc9f28aa5078ab83b81353775ecbf18fdc9a9fea53e5e5f4ea74a',
      'x-service-timestamp': '1763683200',
      'x-service-event': 'email.sent',
      'webhook-id': 'evt_01',
      'webhook-timestamp': '1763683200',
      'webhook-signature': 'v1,BvKTG4c+GWAZZ3X9GE5sjCHWMdXpf75NkZzaKS2L96A=',
    });
  });

  it('carries one signature per secret in force, each verifiable on its own', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const t = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders({
      eventId: 'evt_0abc',
      eventType: 'email.sent',
      body,
      secrets: [current, previous],
      timestamp: t,
    });
    expect(headers['x-service-signature']!.match(/v1=[0-9a-f]{64}/g)).toHaveLength(2);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
      expect(verifyWebhook({ payload: body, headers, secret }).id).toBe('evt_0abc');
    }
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
  });
});
