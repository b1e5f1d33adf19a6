import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import type { RenderedContent } from './content.ts';
import { composeRaw, envelopeRecipients } from './mime.ts';

const content: RenderedContent = {
  from: 'Ann <ann@sender.example>',
  to: 'bob@example.com',
  cc: ['cy@example.org'],
  bcc: ['dee@example.net'],
  reply_to: 'help@sender.example',
  subject: 'Hello',
  html: '<p>Hi <b>Bob</b></p>',
  text: null,
  headers: { 'X-Campaign': 'c1' },
};

describe('composeRaw', () => {
  it('gives the bytes of the message: ids, headers, both parts, and no Bcc', async () => {
    const date = new Date('2026-01-02T03:04:05Z');
    const raw = await composeRaw(content, { messageId: '<msg_1@sender.example>', date });
    const mail = await simpleParser(raw);
    expect(mail.messageId).toBe('<msg_1@sender.example>');
    expect(mail.date?.toISOString()).toBe(date.toISOString());
    expect(mail.from?.value[0]).toMatchObject({ name: 'Ann', address: 'ann@sender.example' });
    expect(mail.subject).toBe('Hello');
    expect(mail.headers.get('x-campaign')).toBe('c1');
    expect(mail.replyTo?.text).toBe('help@sender.example');
    expect(mail.html).toContain('<b>Bob</b>');
    expect(mail.text?.trim()).toBe('Hi Bob');
    expect(raw.toString()).not.toMatch(/^bcc:/im);
    expect(raw.toString()).not.toContain('dee@example.net');
  });

  it('composes the same content for the same message', async () => {
    const at = { messageId: '<msg_2@sender.example>', date: new Date(0) };
    const [a, b] = await Promise.all([composeRaw(content, at), composeRaw(content, at)]);
    // MIME boundaries are random: the same content, not necessarily the same bytes.
    expect((await simpleParser(a)).html).toBe((await simpleParser(b)).html);
  });

  it('lists every envelope recipient, To first', () => {
    expect(envelopeRecipients(content)).toEqual(['bob@example.com', 'cy@example.org', 'dee@example.net']);
  });

  it('takes the address alone from a recipient written with a display name', () => {
    const named = { ...content, to: 'Bob Reader <bob@example.com>', cc: ['"Cy, Jr." <cy@example.org>'] };
    expect(envelopeRecipients(named)).toEqual(['bob@example.com', 'cy@example.org', 'dee@example.net']);
  });
});
