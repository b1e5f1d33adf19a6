// Each SMTP verb of a submission session without a socket (STYLE 7): real .eml fixtures in, the
// drafts the gate is given and the replies a client would read out.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatepostError, errorCatalog, type ErrorCode } from '../../errors/errors.catalog.ts';
import type { BatchAdmission, BatchResult, Gate, Sender } from '../../gate/gate.ts';
import type { KeyRing } from '../../tenancy/keys.ts';
import { keyRecord } from '../../store/catalog.port.ts';
import { parseMessage, submissionItems } from './submission.drafts.ts';
import { replyFor, replyLine } from './submission.replies.ts';
import { AuthThrottle } from './submission.throttle.ts';
import { authenticate, authOffered, checkRecipient, MAX_RECIPIENTS, submit, type SubmissionDeps } from './submission.session.ts';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

const sender = (kind: 'live' | 'sandbox' | 'public' = 'live'): Sender => ({
  tenant: {
    id: 'ten_1',
    name: 't',
    default_from: null,
    quota: { per_second: null, per_day: null },
    queue_weight: 1,
    created_at: '',
  },
  key: keyRecord({ id: 'key_1', tenant_id: 'ten_1', kind, name: null, prefix: 'gp_x' }, ''),
});

/** A session's dependencies with a gate that records what it is asked and answers as told. */
const LIMITS = { authFailuresPerSession: 3, authFailuresPerAddress: 5, authFailureWindowMs: 60_000 };

function fakes(gate: Partial<Gate> = {}) {
  const admitted: BatchAdmission[] = [];
  const logged: unknown[] = [];
  const deps: SubmissionDeps = {
    keys: {
      resolve: async (secret: string) => {
        if (secret === 'gp_public_k') return sender('public');
        if (secret !== 'gp_live_k') throw new GatepostError('invalid_api_key');
        return sender();
      },
    } as KeyRing,
    gate: {
      admit: () => Promise.reject(new Error('not used')),
      async admitAll(admission) {
        admitted.push(admission);
        return admission.items.map((_, i): BatchResult => ({
          ok: {
            response: { id: `msg_${i}`, status: 'queued', to: '', created_at: '', send_at: null, sandbox: false },
            replayed: false,
          },
        }));
      },
      checkRecipient: async () => undefined,
      ...gate,
    },
    log: (_message, error) => void logged.push(error),
    throttle: new AuthThrottle(LIMITS),
  };
  return { deps, admitted, logged };
}

describe('AUTH', () => {
  const auth = (password: string) => authenticate(fakes().deps, { password, session: {}, remoteAddress: '127.0.0.1' });

  it('is offered over TLS from anywhere, and without TLS on loopback only', () => {
    for (const address of ['203.0.113.9', '2001:db8::1', '::ffff:198.51.100.2', '10.0.0.5']) {
      expect(authOffered({ secure: false, remoteAddress: address })).toBe(false);
      expect(authOffered({ secure: true, remoteAddress: address })).toBe(true);
    }
    expect(authOffered({ secure: false, remoteAddress: '' })).toBe(false);
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
      expect(authOffered({ secure: false, remoteAddress: address })).toBe(true);
    }
  });

  it('takes a live key', async () => {
    expect(await auth('gp_live_k')).toEqual({ sender: sender() });
  });

  it('answers a wrong, missing or public key with its catalogue reply', async () => {
    expect(await auth('gp_live_wrong')).toEqual({
      reply: { code: 535, enhanced: '5.7.8', text: 'The API key is unknown or has been revoked.' },
    });
    expect(await auth('')).toMatchObject({ reply: { code: 530, enhanced: '5.7.0' } });
    expect(await auth('gp_public_k')).toMatchObject({ reply: { code: 550, enhanced: '5.7.1' } });
  });
});

describe('failed AUTH', () => {
  const wrong = { code: 535, enhanced: '5.7.8', text: 'The API key is unknown or has been revoked.' };
  const closing = { code: 421, enhanced: '4.7.0', text: 'Too many failed authentications on this connection; closing it.' };

  it("closes a connection at its third failure, and refuses an address's connections after its fifth", async () => {
    const { deps } = fakes();
    const auth = (session: object, password = 'gp_live_wrong', remoteAddress = '203.0.113.9') =>
      authenticate(deps, { password, session, remoteAddress });
    const first = {};
    expect(await auth(first)).toEqual({ reply: wrong });
    expect(await auth(first)).toEqual({ reply: wrong });
    expect(await auth(first)).toEqual({ reply: closing });
    const second = {};
    expect(await auth(second)).toEqual({ reply: wrong });
    // The fifth failure from the address: it is refused from here, the right key included.
    expect(await auth(second)).toMatchObject({
      reply: { code: 421, text: /^Too many failed authentications from this address; try again in 1 minute\.$/ },
    });
    expect(deps.throttle.refusal('203.0.113.9')).toMatchObject({ code: 421, enhanced: '4.7.0' });
    expect(await auth({}, 'gp_live_k')).toMatchObject({ reply: { code: 421 } });
    // Others are not.
    expect(await auth({}, 'gp_live_k', '203.0.113.10')).toEqual({ sender: sender() });
  });

  it('counts an IPv6 /64 as one address', async () => {
    const { deps } = fakes();
    for (let i = 1; i <= LIMITS.authFailuresPerAddress; i++) {
      await authenticate(deps, { password: 'gp_live_wrong', session: {}, remoteAddress: `2001:db8:1:2::${i}` });
    }
    expect(deps.throttle.refusal('2001:db8:1:2:ffff::9')).toMatchObject({ code: 421 });
    expect(deps.throttle.refusal('2001:db8:1:3::1')).toBeNull();
  });

  it('does not count a failure of ours', async () => {
    const { deps } = fakes();
    deps.keys = { resolve: () => Promise.reject(new Error('catalog down')) } as unknown as KeyRing;
    const session = {};
    for (let i = 0; i < LIMITS.authFailuresPerSession; i++) {
      expect(await authenticate(deps, { password: 'gp_live_k', session, remoteAddress: '203.0.113.9' })).toMatchObject({
        reply: { code: 451 },
      });
    }
    expect(deps.throttle.refusal('203.0.113.9')).toBeNull();
  });
});

describe('RCPT TO', () => {
  it('accepts a valid recipient the tenant has not suppressed', async () => {
    expect(await checkRecipient(fakes().deps, sender(), 'ann@example.com', 0)).toBeNull();
  });

  it('refuses a suppressed one, a malformed one, and one past the limit', async () => {
    const { deps } = fakes({
      checkRecipient: async (_s, address) => {
        throw new GatepostError('recipient_suppressed', `${address} is suppressed (hard_bounce); nothing is sent to it.`);
      },
    });
    expect(await checkRecipient(deps, sender(), 'gone@example.com', 0)).toEqual({
      code: 550,
      enhanced: '5.1.1',
      text: 'gone@example.com is suppressed (hard_bounce); nothing is sent to it.',
    });
    expect(await checkRecipient(deps, sender(), 'no-domain', 0)).toMatchObject({ code: 501, enhanced: '5.5.4' });
    expect(await checkRecipient(deps, sender(), 'ann@example.com', MAX_RECIPIENTS)).toMatchObject({
      code: 452,
      enhanced: '4.5.3',
    });
  });

  it('answers 451 4.3.0 when the check itself fails, and logs it', async () => {
    const { deps, logged } = fakes({ checkRecipient: () => Promise.reject(new Error('state store down')) });
    expect(await checkRecipient(deps, sender(), 'ann@example.com', 0)).toMatchObject({ code: 451, enhanced: '4.3.0' });
    expect(logged).toHaveLength(1);
  });
});

describe('DATA', () => {
  const envelope = { mailFrom: 'bounce@sender.example', rcptTo: ['ann@example.com', 'John@Example.com', 'hidden@example.com'] };

  it('makes one draft per envelope recipient, showing the headers the sender wrote', async () => {
    const { deps, admitted } = fakes();
    const reply = await submit(
      deps,
      { sender: sender(), envelope },
      { raw: fixture('thunderbird-alternative.eml'), oversized: false },
    );
    expect(replyLine(reply)).toBe('2.0.0 Queued 3 messages: msg_0 msg_1 msg_2');
    const [admission] = admitted;
    expect(admission).toMatchObject({ ingress: 'smtp', refusals: 'all', sender: sender() });
    const messageId = '<4b1f0c2e-7d3a-4c55-9a51-2f8e6a1d9c10@sender.example>';
    expect(admission!.batchKey).toBe(`smtp:${messageId}`);
    expect(admission!.items.map((i) => [i.draft.to, i.idempotencyKey])).toEqual([
      ['ann@example.com', `smtp:${messageId}:ann@example.com`],
      ['John@Example.com', `smtp:${messageId}:john@example.com`],
      ['hidden@example.com', `smtp:${messageId}:hidden@example.com`],
    ]);
    const { to: _to, ...shared } = admission!.items[0]!.draft;
    expect(shared).toEqual({
      from: '"Zoë Sender" <zoe@sender.example>',
      reply_to: 'help@sender.example',
      subject: 'Grüße and your order',
      html: '<html><body><p>Hello Ann, your order <b>{{id}}</b> has shipped.</p></body></html>\n',
      text: 'Hello Ann, your order {{id}} has shipped.',
      // Structure, date and Message-ID are written anew; the rest the gate judges.
      headers: {
        'User-Agent': 'Mozilla Thunderbird',
        'X-Campaign': 'autumn',
        'X-Long-Header': 'first part of a value that was folded onto a second line',
      },
      attachments: 0,
      shown: { to: ['"Ann Reader" <ann@example.com>', '"Doe, John" <john@example.com>'], cc: ['carl@example.com'] },
      literal: true,
    });
    // Every recipient's message is the same but for its recipient.
    for (const item of admission!.items) expect({ ...item.draft, to: undefined }).toEqual({ ...shared, to: undefined });
  });

  it('sends text-only mail with html made from the text; without a Message-ID, no idempotency key', async () => {
    const { deps, admitted } = fakes();
    await submit(
      deps,
      { sender: sender(), envelope: { mailFrom: null, rcptTo: ['ops@example.com'] } },
      {
        raw: fixture('plain-undisclosed.eml'),
        oversized: false,
      },
    );
    const [item] = admitted[0]!.items;
    expect(item!.idempotencyKey).toBeUndefined();
    expect(admitted[0]!.batchKey).toBeUndefined();
    expect(item!.draft.shown).toEqual({ to: [], cc: [] });
    expect(item!.draft.text).toBe('The disk of web-1 is 93% full.\nDashboard: https://status.sender.example/web-1\n');
    // The html every ingress makes of a text: the text as written, escaped, its line breaks kept.
    expect(item!.draft.html).toBe(
      '<div style="white-space: pre-wrap">The disk of web-1 is 93% full.\nDashboard: https://status.sender.example/web-1\n</div>',
    );
  });

  it('counts attachments into the drafts, for the gate to refuse', async () => {
    const mail = await parseMessage(fixture('mixed-attachment.eml'));
    const { items } = submissionItems(mail, { mailFrom: null, rcptTo: ['ann@example.com'] });
    expect(items[0]!.draft.attachments).toBe(1);
  });

  it('refuses what cannot be sent as written, naming it, without asking the gate', async () => {
    const { deps, admitted } = fakes();
    const raw = Buffer.from(
      'From: a@sender.example, b@sender.example\r\nTo: ann@example.com\r\nX-Tag: 1\r\nX-Tag: 2\r\nSubject: s\r\n\r\n',
    );
    const reply = await submit(deps, { sender: sender(), envelope }, { raw, oversized: false });
    expect(reply).toEqual({
      code: 501,
      enhanced: '5.5.4',
      text:
        'The message cannot be sent as it is: headers.X-Tag appears twice; Gatepost sends each header once; ' +
        'from names 2 mailboxes; Gatepost takes one; body is empty: send a text/plain or text/html part.',
    });
    expect(admitted).toHaveLength(0);
  });

  it('refuses an oversized message with 552 5.3.4 without parsing it', async () => {
    const { deps, admitted } = fakes();
    const reply = await submit(deps, { sender: sender(), envelope }, { raw: Buffer.alloc(0), oversized: true });
    expect(reply).toMatchObject({ code: 552, enhanced: '5.3.4' });
    expect(admitted).toHaveLength(0);
  });

  it("answers the gate's refusal for the whole message, and 451 for a failure of ours", async () => {
    const quota = new GatepostError('quota_exceeded', 'The daily quota of 2 sends is used up; it resets at 00:00 UTC.');
    const refused = fakes({ admitAll: () => Promise.reject(quota) });
    const raw = fixture('plain-undisclosed.eml');
    expect(await submit(refused.deps, { sender: sender(), envelope }, { raw, oversized: false })).toEqual({
      code: 452,
      enhanced: '4.5.3',
      text: 'The daily quota of 2 sends is used up; it resets at 00:00 UTC.',
    });
    const broken = fakes({ admitAll: () => Promise.reject(new Error('disk full')) });
    expect(await submit(broken.deps, { sender: sender(), envelope }, { raw, oversized: false })).toMatchObject({
      code: 451,
      enhanced: '4.3.0',
    });
    expect(broken.logged).toHaveLength(1);
  });
});

describe('replies', () => {
  it("carry each catalogue code's SMTP reply", () => {
    for (const [code, entry] of Object.entries(errorCatalog)) {
      const reply = replyFor(new GatepostError(code as ErrorCode));
      expect([reply.code, reply.enhanced]).toEqual(entry.smtp);
    }
  });

  it('fit one reply line, with no line breaks', () => {
    const line = replyLine(replyFor(new GatepostError('invalid_request', `bad\r\n${'x'.repeat(2000)}`)));
    expect(line.length).toBeLessThanOrEqual(480);
    expect(line).not.toMatch(/[\r\n]/);
  });
});
