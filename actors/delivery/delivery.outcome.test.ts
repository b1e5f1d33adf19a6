import { describe, expect, it } from 'vitest';
import { parseReply, unanswered, type DeliveryReport } from '../../mta/transport.ts';
import { classify } from './delivery.outcome.ts';

const from = (result: DeliveryReport['result'], reply: string): DeliveryReport => ({
  result,
  reply: parseReply(reply),
  mx: 'mx.example.com',
  ip: '192.0.2.1',
  tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
  connected_at: '2026-01-01T00:00:00.000Z',
  accepted_at: result === 'accepted' ? '2026-01-01T00:00:01.000Z' : null,
});

const H = 3_600_000;
const policy = { schedule: [60_000, 4 * H, 24 * H], horizon: 10 * H };

describe('classify', () => {
  it('250 is sent, with who answered, over what, and the whole reply', () => {
    expect(classify(from('accepted', '250 2.0.0 Ok: queued as X'), 1, policy, 0)).toEqual({
      attempt: 1,
      result: 'sent',
      smtp_code: 250,
      enhanced_code: '2.0.0',
      response: '250 2.0.0 Ok: queued as X',
      mx: 'mx.example.com',
      ip: '192.0.2.1',
      tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
      connected_at: '2026-01-01T00:00:00.000Z',
      accepted_at: '2026-01-01T00:00:01.000Z',
      retry_at: null,
    });
  });

  it('5xx is a hard bounce; 5.7.x a block; a 5xx with no enhanced code is hard', () => {
    expect(classify(from('permanent', '550 5.1.1 No such user'), 1, policy, 0)).toMatchObject({
      result: 'bounced',
      bounce_type: 'hard',
    });
    expect(classify(from('permanent', '554 5.7.1 Blocked'), 1, policy, 0)).toMatchObject({
      result: 'bounced',
      bounce_type: 'block',
    });
    expect(classify(from('permanent', '550 mailbox unavailable'), 1, policy, 0)).toMatchObject({
      bounce_type: 'hard',
      enhanced_code: null,
    });
    expect(classify(unanswered('permanent', 'null MX'), 1, policy, 0)).toMatchObject({
      bounce_type: 'hard',
      smtp_code: null,
      mx: null,
    });
  });

  it('transient: deferred after the next wait, never past the horizon, then soft-bounced', () => {
    const busy = from('transient', '451 4.3.0 Try again later');
    expect(classify(busy, 1, policy, 0)).toMatchObject({ result: 'deferred', retry_at: new Date(60_000).toISOString() });
    // The third wait (24 h) would end after the horizon (10 h): the last retry is at the horizon.
    expect(classify(busy, 3, policy, 2 * H)).toMatchObject({ result: 'deferred', retry_at: new Date(10 * H).toISOString() });
    expect(classify(busy, 4, policy, 10 * H)).toMatchObject({ result: 'bounced', bounce_type: 'soft', smtp_code: 451 });
    // The waits running out first ends it as well.
    expect(classify(busy, 4, { ...policy, horizon: 100 * H }, 5 * H)).toMatchObject({ result: 'bounced', bounce_type: 'soft' });
  });
});
