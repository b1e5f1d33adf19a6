import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { inlineParser } from './submission.parser.ts';
import { simpleSubmission } from './submission.simple.ts';
import type { Envelope } from './submission.drafts.ts';

const envelope: Envelope = { mailFrom: 'bounce@sender.example', rcptTo: ['ann@example.com', 'Bob@Example.com'] };
const one: Envelope = { mailFrom: null, rcptTo: ['ann@example.com'] };

const text =
  'Line 1 of the notice.\r\nLine 2: see https://example.com/track?id=1&x=<2> or www.example.org.\r\n\r\n\r\nA <b>tag</b> & "quotes"  \r\n';
const msg = (headers: string, body = text) => Buffer.from(`${headers.replace(/\n/g, '\r\n')}\r\n\r\n${body}`);

/** Messages the fast path takes: it must give exactly what mailparser gives. */
const simple: Record<string, Buffer> = {
  bench: msg(
    'From: Shop <shop@sender.example>\nTo: user1@example.com\nSubject: Order 1 has shipped\nMessage-ID: <1.x@sender.example>\nDate: Sat, 21 Nov 2026 09:00:00 GMT\nMIME-Version: 1.0\nContent-Type: text/plain; charset=us-ascii',
  ),
  'no content-type, bare message-id, X- headers': msg(
    'From: shop@sender.example\nTo: "Ann, A." <ann@example.com>, bob@example.com\nCc: Team: carl@example.com, dee@example.com;\nSubject:   Spaces   inside  \nMessage-ID: 42.abc@sender.example\nX-Campaign: spring\nX-Trace:  folded\n  value\tand tab',
  ),
  'folded subject and utf-8 charset, quoted': msg(
    'From: "Shop \\"Best\\"" <shop@sender.example>\nReply-To: help@sender.example\nSubject: A long\n subject\n\tfolded\nContent-Type: TEXT/PLAIN; charset="UTF-8"\nContent-Transfer-Encoding: 7bit',
  ),
  'no message-id, LF line endings': Buffer.from(
    'From: a@sender.example\nTo: b@example.com\nSubject: hi\n\nJust text\nand more\n',
  ),
  'repeated custom header (refused alike)': msg('From: a@sender.example\nSubject: hi\nX-Tag: 1\nX-Tag: 2'),
  'two From mailboxes (refused alike)': msg('From: a@sender.example, b@sender.example\nSubject: hi'),
  'no From at all': msg('To: b@example.com\nSubject: hi'),
  'empty subject': msg('From: a@sender.example\nSubject:\nMessage-ID:'),
  'reserved header passed on (refused by the gate later)': msg(
    'From: a@sender.example\nSubject: hi\nSender: x@sender.example\nReceived: from x',
  ),
  'a body of one line without a newline': msg('From: a@sender.example\nSubject: hi', 'one line'),
};

/** Messages it leaves to mailparser. */
const notSimple: Record<string, Buffer> = {
  html: msg('From: a@sender.example\nContent-Type: text/html; charset=utf-8', '<p>hi</p>\r\n'),
  multipart: msg('From: a@sender.example\nContent-Type: multipart/alternative; boundary=x', '--x\r\n\r\nhi\r\n--x--\r\n'),
  'quoted-printable': msg('From: a@sender.example\nContent-Transfer-Encoding: quoted-printable', 'caf=C3=A9\r\n'),
  'encoded word': msg('From: a@sender.example\nSubject: =?utf-8?q?caf=C3=A9?='),
  '8-bit body': Buffer.concat([
    msg('From: a@sender.example\nContent-Type: text/plain; charset=utf-8', ''),
    Buffer.from('café\r\n'),
  ]),
  'format=flowed': msg('From: a@sender.example\nContent-Type: text/plain; charset=us-ascii; format=flowed'),
  'latin-1 charset': msg('From: a@sender.example\nContent-Type: text/plain; charset=iso-8859-1'),
  attachment: msg('From: a@sender.example\nContent-Disposition: attachment; filename=a.txt'),
  'two To headers': msg('From: a@sender.example\nTo: b@example.com\nTo: c@example.com'),
  'empty body': msg('From: a@sender.example\nSubject: hi', '\r\n'),
  'no blank line': Buffer.from('From: a@sender.example\r\nSubject: hi\r\n'),
  mbox: msg('From someone Sat Nov 21\nSubject: hi'),
  'bare CR': msg('From: a@sender.example\nSubject: hi', 'a\rb\r\n'),
};

const outcome = (p: Promise<unknown>) =>
  p.then(
    (ok) => ({ ok }),
    (e: Error & { code?: string; details?: unknown }) => ({ error: [e.code, e.message, e.details] }),
  );

describe('SMTP submission: the fast path for simple messages', () => {
  for (const [name, raw] of Object.entries(simple)) {
    it(`gives what mailparser gives: ${name}`, async () => {
      for (const env of [one, envelope]) {
        const fast = await outcome(Promise.resolve().then(() => simpleSubmission(raw, env)));
        expect(fast).not.toEqual({ ok: null });
        expect(fast).toEqual(await outcome(inlineParser.parse(raw, env)));
      }
    });
  }
  for (const [name, raw] of Object.entries(notSimple)) {
    it(`leaves to mailparser: ${name}`, () => {
      expect(simpleSubmission(raw, one)).toBeNull();
    });
  }
  it('gives what mailparser gives for every .eml fixture it takes', async () => {
    const dir = new URL('./fixtures', import.meta.url);
    let files: string[] = [];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
    } catch {
      return;
    }
    for (const f of files) {
      const raw = readFileSync(new URL(f, dir));
      const fast = await outcome(Promise.resolve().then(() => simpleSubmission(raw, one)));
      if ('ok' in fast && fast.ok === null) continue;
      expect(fast, f).toEqual(await outcome(inlineParser.parse(raw, one)));
    }
  });
});
