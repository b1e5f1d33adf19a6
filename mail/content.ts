// A rendered message: what the gate admits, what the message actor keeps, what delivery sends.
import { compile } from 'html-to-text';
import { Parser } from 'htmlparser2';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { clickTarget } from './tracking.token.ts';

/** The To and Cc headers of a message whose recipients are not the ones it shows (SMTP submission). */
export interface ShownRecipients {
  to: string[];
  cc: string[];
}

export interface RenderedContent {
  from: string;
  to: string;
  /** Shown to every recipient; each also receives the message. Absent on messages from before cc existed. */
  cc?: string[];
  /** Receive the message without being shown in it. */
  bcc?: string[];
  /** When present, the To and Cc headers show these instead, and `to`, `cc` and `bcc` are only the envelope. */
  shown?: ShownRecipients;
  reply_to: string | null;
  subject: string;
  html: string;
  /** Null when the sender gave none; the plain-text part is then generated from the html. */
  text: string | null;
  headers: Record<string, string>;
}

// Compiled once: html-to-text's `convert` compiles its options on every call.
const htmlToText = compile({
  wordwrap: 78,
  selectors: [
    { selector: 'img', format: 'skip' },
    // A tracked link shows as its sender wrote it.
    { selector: 'a', options: { pathRewrite: (href: string) => clickTarget(href) ?? href } },
  ],
});

/**
 * The plain-text part of a message that has none of its own, made when it is sent or shown, not
 * at admission (a fan-out's messages each had it made and kept; a twelfth of a broadcast
 * message's CPU): its links as the sender wrote them, tracked ones too, and no images (the open pixel).
 */
export function textFromHtml(html: string): string {
  return htmlToText(html);
}

const UNSHOWN = new Set(['style', 'script', 'head', 'title']);

/**
 * The html's words, for a search index: its text with entities decoded and what a reader never
 * sees (style, script, head) left out, each element's text apart from the next. Half or less of
 * textFromHtml's cost, which lays the text out for reading (bench/RESULTS.md, the inbox's smoke run).
 */
export function htmlWords(html: string): string {
  const words: string[] = [];
  let unshown = 0;
  const parser = new Parser(
    {
      onopentagname: (name) => void (UNSHOWN.has(name) && unshown++),
      // Each element's text apart from the next ('<p>a</p><p>b</p>' is not 'ab').
      onclosetag: (name) => void (UNSHOWN.has(name) ? unshown-- : words.push(' ')),
      ontext: (text) => void (unshown === 0 && words.push(text)),
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return words.join('').replace(/\s+/g, ' ');
}

/**
 * The HTML part of a text-only send, whatever ingress it came by (every message goes out
 * multipart/alternative): the text with its line breaks kept. Only &, < and > are escaped, so {{placeholders}} still render.
 */
export function htmlFromText(text: string): string {
  const escaped = text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
  return `<div style="white-space: pre-wrap">${escaped}</div>`;
}

/** The nodemailer message for a rendered content: multipart/alternative, text then html. */
export function mailOptions(content: RenderedContent, messageId: string, date: Date): Mail.Options {
  const { shown } = content;
  const recipients = {
    to: content.to,
    ...(content.cc?.length ? { cc: content.cc } : {}),
    ...(content.bcc?.length ? { bcc: content.bcc } : {}),
  };
  return {
    from: content.from,
    ...(shown
      ? {
          to: shown.to,
          cc: shown.cc,
          envelope: { from: content.from, to: [recipients.to, ...(recipients.cc ?? []), ...(recipients.bcc ?? [])] },
        }
      : recipients),
    ...(content.reply_to ? { replyTo: content.reply_to } : {}),
    subject: content.subject,
    text: content.text ?? textFromHtml(content.html),
    html: content.html,
    headers: content.headers,
    messageId,
    date,
  };
}

/** Bytes the rendered content weighs, as the size limit counts them. */
export function contentBytes(content: RenderedContent): number {
  let n = Buffer.byteLength(content.subject) + Buffer.byteLength(content.html) + Buffer.byteLength(content.text ?? '');
  for (const [k, v] of Object.entries(content.headers)) n += Buffer.byteLength(k) + Buffer.byteLength(v) + 4;
  for (const address of [...(content.shown?.to ?? []), ...(content.shown?.cc ?? [])]) n += Buffer.byteLength(address) + 2;
  return n;
}
