// Style P messages to drafts, and the gate's outcomes back to what Postmark's clients read.
import { Errors } from 'postmark';
import { describe, expect, it } from 'vitest';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import type { BatchResult } from '../../../gate/gate.ts';
import { inactiveMessage } from './style-p.errors.ts';
import { draftsOf, resultOf, splitAddresses } from './style-p.map.ts';
import { StylePMessage, StylePTemplatedMessage } from './style-p.schema.ts';

const plain = (fields: Record<string, unknown>) => ({
  templated: false as const,
  message: StylePMessage.parse({ From: 'a@sender.example', Subject: 's', HtmlBody: '<p>h</p>', ...fields }),
});
const refusal = (fields: Record<string, unknown>) => {
  try {
    draftsOf(plain(fields));
  } catch (error) {
    return (error as GatepostError).details;
  }
  throw new Error('not refused');
};

describe('splitAddresses', () => {
  it('splits on commas outside quotes, keeping names, and keeps text that is no address for the gate to refuse', () => {
    expect(splitAddresses('a@x.com, "Doe, J" <j@x.com>,, Ann <ann@x.com>, nonsense')).toEqual([
      'a@x.com',
      '"Doe, J" <j@x.com>',
      '"Ann" <ann@x.com>',
      'nonsense',
    ]);
    expect(splitAddresses(undefined)).toEqual([]);
  });
});

describe('draftsOf', () => {
  it('makes one draft per To address, each with the Cc and Bcc, sent literally', () => {
    const drafts = draftsOf(plain({ To: 'a@x.com, b@x.com', Cc: 'c@x.com', Bcc: 'd@x.com, e@x.com', Tag: 'welcome' }));
    expect(drafts.map((d) => d.to)).toEqual(['a@x.com', 'b@x.com']);
    for (const d of drafts) {
      expect(d).toMatchObject({ cc: ['c@x.com'], bcc: ['d@x.com', 'e@x.com'], tags: ['welcome'], literal: true });
    }
  });

  it('keeps Headers and Metadata as headers, takes the tracking flags as the send does, and refuses a header set twice', () => {
    const [draft] = draftsOf(
      plain({
        To: 'a@x.com',
        Headers: [{ Name: 'X-A', Value: '1' }],
        Metadata: { order: '42' },
        TrackOpens: false,
        TrackLinks: 'HtmlOnly',
      }),
    );
    expect(draft!.headers).toEqual({
      'X-A': '1',
      'X-PM-Metadata-order': '42',
    });
    expect(draft).toMatchObject({ track_opens: false, track_clicks: true });
    for (const [links, clicks] of [
      ['HtmlAndText', true],
      ['TextOnly', false],
      ['None', false],
    ] as const) {
      expect(draftsOf(plain({ To: 'a@x.com', TrackLinks: links }))[0]!.track_clicks).toBe(clicks);
    }
    expect(draftsOf(plain({ To: 'a@x.com' }))[0]).not.toHaveProperty('track_clicks');
    expect(
      refusal({
        To: 'a@x.com',
        Headers: [
          { Name: 'X-A', Value: '1' },
          { Name: 'x-a', Value: '2' },
        ],
      }),
    ).toEqual([{ field: 'Headers[1]', message: 'sets the header x-a a second time' }]);
  });

  it('maps the stream ids Postmark servers have by default, and refuses others', () => {
    expect(draftsOf(plain({ To: 'a@x.com' }))[0]!.stream).toBeUndefined();
    expect(draftsOf(plain({ To: 'a@x.com', MessageStream: 'outbound' }))[0]!.stream).toBe('transactional');
    expect(draftsOf(plain({ To: 'a@x.com', MessageStream: 'broadcast' }))[0]!.stream).toBe('broadcast');
    expect(refusal({ To: 'a@x.com', MessageStream: 'newsletters' })![0]!.field).toBe('MessageStream');
  });

  it('gives a TextBody-only message an HTML part showing the text, and refuses a message with no body', () => {
    const [draft] = draftsOf(plain({ To: 'a@x.com', HtmlBody: undefined, TextBody: 'a < b\n  c' }));
    expect(draft).toMatchObject({ text: 'a < b\n  c', html: '<div style="white-space: pre-wrap">a &lt; b\n  c</div>' });
    expect(refusal({ To: 'a@x.com', HtmlBody: '' })).toEqual([{ field: 'HtmlBody', message: 'give HtmlBody, TextBody or both' }]);
  });

  it('refuses more than 50 addresses in To, Cc and Bcc together, and a To naming none', () => {
    const many = Array.from({ length: 49 }, (_, i) => `r${i}@x.com`).join(', ');
    expect(draftsOf(plain({ To: many, Cc: 'c@x.com' }))).toHaveLength(49);
    expect(refusal({ To: many, Cc: 'c@x.com', Bcc: 'd@x.com' })![0]!.field).toBe('To');
    expect(refusal({ To: ' , ' })).toEqual([{ field: 'To', message: 'names no address' }]);
  });

  it('names the template by TemplateAlias or TemplateId (its slug), with TemplateModel as data', () => {
    const templated = (fields: Record<string, unknown>) =>
      draftsOf({ templated: true, message: StylePTemplatedMessage.parse({ To: 'a@x.com', ...fields }) });
    expect(templated({ TemplateAlias: 'welcome', TemplateModel: { n: 1 } })[0]).toMatchObject({
      template: 'welcome',
      data: { n: 1 },
    });
    expect(templated({ TemplateId: 4711 })[0]).toMatchObject({ template: '4711', data: {} });
    expect(() => templated({ TemplateId: 1, TemplateAlias: 'welcome' })).toThrow(GatepostError);
    expect(() => templated({})).toThrow(GatepostError);
  });
});

describe('results and refusals', () => {
  const ok = (id: string, to: string): BatchResult => ({
    ok: {
      replayed: false,
      response: { id, to, status: 'queued', created_at: '2026-01-01T00:00:00.000Z', send_at: null, sandbox: false },
    },
  });
  const suppressed = (address: string): BatchResult => ({
    refused: new GatepostError('recipient_suppressed', `${address} is suppressed (manual); the message was not sent.`),
  });

  it('answers the first message id, and what became of each To address', () => {
    const drafts = draftsOf(plain({ To: 'a@x.com, b@x.com' }));
    expect(resultOf('a@x.com, b@x.com', drafts, [ok('msg_a', 'a@x.com'), ok('msg_b', 'b@x.com')])).toEqual({
      ErrorCode: 0,
      Message: 'OK',
      To: 'a@x.com, b@x.com',
      SubmittedAt: '2026-01-01T00:00:00.000Z',
      MessageID: 'msg_a',
      Recipients: [
        { To: 'a@x.com', ErrorCode: 0, Message: 'OK', MessageID: 'msg_a' },
        { To: 'b@x.com', ErrorCode: 0, Message: 'OK', MessageID: 'msg_b' },
      ],
    });
  });

  it('lists every suppressed address in a 406 the official client parses', () => {
    const drafts = draftsOf(plain({ To: 'a@x.com, b@x.com, c@x.com' }));
    const result = resultOf(undefined, drafts, [suppressed('a@x.com'), ok('msg_b', 'b@x.com'), suppressed('c@x.com')]);
    expect(result).toMatchObject({ ErrorCode: 406, To: 'b@x.com' });
    expect(result.MessageID).toBeUndefined();
    expect(Errors.InactiveRecipientsError.parseInactiveRecipients(result.Message)).toEqual(['a@x.com', 'c@x.com']);
    expect(result.Recipients!.map((r) => r.ErrorCode)).toEqual([406, 0, 406]);
    expect(Errors.InactiveRecipientsError.parseInactiveRecipients(inactiveMessage(['x@y.com']))).toEqual(['x@y.com']);
  });
});

describe('address fields with control characters', () => {
  it('refuses CR, LF and other control characters in every address field, naming it, instead of reading another address out of it', () => {
    for (const field of ['To', 'Cc', 'Bcc', 'From', 'ReplyTo']) {
      expect(refusal({ To: 'ann@example.com', [field]: 'ann@example.com\r\nBcc: v@example.com' }), field).toEqual([
        { field, message: 'holds a control character (CR, LF, NUL, ...)' },
      ]);
    }
    expect(refusal({ To: 'ann@example.com\u0000, bo@example.com' })).toEqual([
      { field: 'To', message: 'holds a control character (CR, LF, NUL, ...)' },
    ]);
  });
});
