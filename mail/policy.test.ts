// The content policy, rule by rule: each accepts what it should and refuses what it should, with
// the field at fault named.
import { describe, expect, it } from 'vitest';
import type { RenderedContent } from './content.ts';
import {
  MAX_HEADERS,
  MAX_MESSAGE_BYTES,
  MAX_RECIPIENTS,
  MAX_SCHEDULE_AHEAD_MS,
  checkAttachments,
  checkContent,
  checkHeaders,
  checkSendAt,
} from './policy.ts';

const content = (over: Partial<RenderedContent> = {}): RenderedContent => ({
  from: 'App <app@sender.example>',
  to: 'ann@example.com',
  reply_to: null,
  subject: 'Hello',
  html: '<p>Hi</p>',
  text: null,
  headers: {},
  ...over,
});

/** The fields checkContent named, or [] if it accepted the content. */
function refusedFields(c: RenderedContent): string[] {
  try {
    checkContent(c);
    return [];
  } catch (error) {
    expect(error).toMatchObject({ code: 'invalid_request' });
    return (error as { details: { field: string }[] }).details.map((d) => d.field);
  }
}

describe('checkAttachments', () => {
  it('accepts a send without attachments and refuses one with any', () => {
    expect(() => checkAttachments(0)).not.toThrow();
    expect(() => checkAttachments(1)).toThrow(expect.objectContaining({ code: 'attachments_unsupported' }));
  });
});

describe('checkHeaders', () => {
  it('accepts custom headers with valid names and values', () => {
    expect(checkHeaders({ 'X-Order': '42', 'List-Unsubscribe': '<mailto:u@example.com>' })).toEqual([]);
  });

  it(`refuses more than ${MAX_HEADERS} headers`, () => {
    const many = Object.fromEntries(Array.from({ length: MAX_HEADERS + 1 }, (_, i) => [`X-H${i}`, 'v']));
    expect(checkHeaders(many)).toEqual([{ field: 'headers', message: `at most ${MAX_HEADERS} headers` }]);
    expect(checkHeaders(Object.fromEntries(Object.entries(many).slice(1)))).toEqual([]);
  });

  it('refuses a name that is not a header field name', () => {
    expect(checkHeaders({ 'X Bad': 'v', 'X:Colon': 'v' }).map((p) => p.field)).toEqual(['headers.X Bad', 'headers.X:Colon']);
  });

  it('refuses a header Gatepost writes itself, in any case', () => {
    expect(checkHeaders({ 'message-id': '<x@y>', BCC: 'a@example.com' })).toEqual([
      { field: 'headers.message-id', message: 'set by Gatepost; use the dedicated field instead' },
      { field: 'headers.BCC', message: 'set by Gatepost; use the dedicated field instead' },
    ]);
  });

  it('refuses a value with CR, LF or NUL, and one longer than 998 characters', () => {
    expect(checkHeaders({ 'X-A': 'a\r\nBcc: x@example.com', 'X-B': 'b\0', 'X-C': 'c'.repeat(999) })).toEqual([
      { field: 'headers.X-A', message: 'must not contain CR, LF or NUL' },
      { field: 'headers.X-B', message: 'must not contain CR, LF or NUL' },
      { field: 'headers.X-C', message: 'longer than 998 characters' },
    ]);
    expect(checkHeaders({ 'X-C': 'c'.repeat(998) })).toEqual([]);
  });

  it('names the field it was given', () => {
    expect(checkHeaders({ 'X A': 'v' }, 'Headers')).toEqual([{ field: 'Headers.X A', message: 'not a valid header name' }]);
  });
});

describe('checkSendAt', () => {
  const now = Date.parse('2026-06-01T12:00:00Z');

  it('accepts no send_at, and one between now and 30 days ahead', () => {
    expect(checkSendAt(undefined, now)).toEqual([]);
    expect(checkSendAt('2026-06-01T12:00:01Z', now)).toEqual([]);
    expect(checkSendAt(new Date(now + MAX_SCHEDULE_AHEAD_MS).toISOString(), now)).toEqual([]);
  });

  it('refuses a send_at that is not a date, is past, or is more than 30 days ahead', () => {
    expect(checkSendAt('tomorrow', now)).toEqual([{ field: 'send_at', message: 'not an ISO 8601 date-time' }]);
    expect(checkSendAt('2026-06-01T11:59:59Z', now)).toEqual([{ field: 'send_at', message: 'is in the past' }]);
    expect(checkSendAt(new Date(now + MAX_SCHEDULE_AHEAD_MS + 1000).toISOString(), now)).toEqual([
      { field: 'send_at', message: 'is more than 30 days ahead' },
    ]);
  });
});

describe('checkContent', () => {
  it('accepts a valid message and answers its mailboxes, parsed', () => {
    const mailboxes = checkContent(content({ cc: ['Bob <bob@example.com>'], bcc: ['cy@example.com'] }));
    expect(mailboxes.from.address).toBe('app@sender.example');
    expect(mailboxes.to.address).toBe('ann@example.com');
    expect(mailboxes.copies.map((m) => m.address)).toEqual(['bob@example.com', 'cy@example.com']);
  });

  it('refuses a sender or recipient that is not a mailbox, or that smuggles a header', () => {
    expect(refusedFields(content({ from: 'nobody' }))).toEqual(['from']);
    expect(refusedFields(content({ to: 'ann@example.com\r\nBcc: v@example.com' }))).toEqual(['to']);
    expect(refusedFields(content({ cc: ['ok@example.com', 'bad'], bcc: ['also bad'] }))).toEqual(['cc[1]', 'bcc[0]']);
    expect(refusedFields(content({ reply_to: 'not an address' }))).toEqual(['reply_to']);
    expect(refusedFields(content({ reply_to: 'replies@example.com' }))).toEqual([]);
  });

  it('refuses shown To and Cc headers that are not mailboxes, though nobody receives them', () => {
    expect(refusedFields(content({ shown: { to: ['list@example.com'], cc: [] } }))).toEqual([]);
    expect(refusedFields(content({ shown: { to: ['x'], cc: ['y'] } }))).toEqual(['shown.to[0]', 'shown.cc[0]']);
  });

  it(`refuses more than ${MAX_RECIPIENTS} recipients in all`, () => {
    const copies = (n: number) => Array.from({ length: n }, (_, i) => `c${i}@example.com`);
    expect(refusedFields(content({ cc: copies(MAX_RECIPIENTS - 1) }))).toEqual([]);
    expect(refusedFields(content({ cc: copies(MAX_RECIPIENTS - 1), bcc: ['one-more@example.com'] }))).toEqual(['cc']);
  });

  it('refuses an empty subject or html, and a subject with a line break', () => {
    expect(refusedFields(content({ subject: '  ' }))).toEqual(['subject']);
    expect(refusedFields(content({ subject: 'Hi\nBcc: v@example.com' }))).toEqual(['subject']);
    expect(refusedFields(content({ html: '' }))).toEqual(['html']);
  });

  it('refuses the headers checkHeaders refuses', () => {
    expect(refusedFields(content({ headers: { Subject: 'again' } }))).toEqual(['headers.Subject']);
  });

  it('refuses a rendered message over 1 MiB with message_too_large', () => {
    const html = (bytes: number) => 'h'.repeat(bytes - Buffer.byteLength('Hello'));
    expect(() => checkContent(content({ html: html(MAX_MESSAGE_BYTES) }))).not.toThrow();
    expect(() => checkContent(content({ html: html(MAX_MESSAGE_BYTES + 1) }))).toThrow(
      expect.objectContaining({ code: 'message_too_large' }),
    );
  });
});
