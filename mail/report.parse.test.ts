// The report parsers over real-format fixtures (fixtures/reports/): DSNs as Postfix, Exim and
// Gmail send them, ARF reports as Yahoo and Outlook.com (JMRP) send them, a plain-text bounce,
// and what is not a report at all.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseReport } from './report.parse.ts';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/reports/${name}`, import.meta.url));

describe('parseReport: delivery status notifications (RFC 3464)', () => {
  it('reads a Postfix DSN: recipient, action, status, diagnostic, remote MTA and the original headers', () => {
    expect(parseReport(fixture('postfix-dsn.eml'))).toEqual({
      kind: 'dsn',
      reporting_mta: 'mx1.example.net',
      recipients: [
        {
          recipient: 'nobody@example.net',
          original_recipient: 'nobody@example.net',
          action: 'failed',
          status: '5.1.1',
          smtp_code: 550,
          diagnostic: '550 5.1.1 <nobody@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
          remote_mta: 'mail.example.net',
        },
      ],
      original: {
        message_id: '<msg_7pst01@shop.example>',
        return_path: 'b+msg_7pst01@bounces.shop.example',
        from: 'Shop <orders@shop.example>',
        to: 'nobody@example.net',
        subject: 'Your order',
      },
    });
  });

  it('reads an Exim DSN, its per-message block apart from the recipient block', () => {
    const r = parseReport(fixture('exim-dsn.eml'));
    expect(r).toMatchObject({
      kind: 'dsn',
      reporting_mta: 'mail.example.org',
      recipients: [
        { recipient: 'gone@example.org', action: 'failed', status: '5.0.0', smtp_code: 550, remote_mta: 'mx.example.org' },
      ],
      original: { message_id: '<msg_7exm01@shop.example>', return_path: 'b+msg_7exm01@bounces.shop.example' },
    });
  });

  it('reads a Gmail DSN past its nested human-readable parts, with the original headers as text/rfc822-headers', () => {
    const r = parseReport(fixture('gmail-dsn.eml'));
    expect(r).toMatchObject({
      kind: 'dsn',
      reporting_mta: 'googlemail.com',
      recipients: [{ recipient: 'no.such.user@gmail.com', action: 'failed', status: '5.1.1', smtp_code: null }],
      original: { message_id: '<msg_7gml01@shop.example>', return_path: 'b+msg_7gml01@bounces.shop.example', subject: 'Welcome' },
    });
    expect(r.kind === 'dsn' && r.recipients[0]!.diagnostic).toMatch(
      /^The email account that you tried to reach does not exist\..* - gsmtp$/,
    );
  });

  it('reads a Gmail delay notice as delayed with its 4.x.x status', () => {
    expect(parseReport(fixture('gmail-delayed.eml'))).toMatchObject({
      kind: 'dsn',
      recipients: [{ recipient: 'slow@example.com', action: 'delayed', status: '4.4.1' }],
    });
  });
});

describe('parseReport: abuse reports (RFC 5965 ARF)', () => {
  it('reads a Yahoo report: feedback type, user agent, Original-Rcpt-To and the original Return-Path', () => {
    expect(parseReport(fixture('yahoo-arf.eml'))).toEqual({
      kind: 'arf',
      feedback_type: 'abuse',
      user_agent: 'Yahoo!-Mail-Feedback/2.0',
      recipient: 'reader@yahoo.com',
      original_mail_from: 'b+msg_7yho01@bounces.shop.example',
      source_ip: null,
      arrival_date: 'Tue, 24 Nov 2026 11:58:40 +0000',
      original: {
        message_id: '<msg_7yho01@shop.example>',
        return_path: 'b+msg_7yho01@bounces.shop.example',
        from: 'Shop <news@shop.example>',
        to: 'reader@yahoo.com',
        subject: 'Weekly deals',
      },
    });
  });

  it('reads an Outlook.com JMRP report, the recipient from its X-HmXmrOriginalRecipient header', () => {
    expect(parseReport(fixture('outlook-jmrp.eml'))).toMatchObject({
      kind: 'arf',
      feedback_type: 'abuse',
      user_agent: 'Hotmail FBL',
      recipient: 'complainer@outlook.com',
      source_ip: '198.51.100.7',
      original: { message_id: '<msg_7otl01@shop.example>', return_path: 'b+msg_7otl01@bounces.shop.example' },
    });
  });

  it('takes no redacted recipient for one', () => {
    const raw = readFileSync(new URL('./fixtures/reports/yahoo-arf.eml', import.meta.url), 'utf8')
      .replace('Original-Rcpt-To: reader@yahoo.com', 'Original-Rcpt-To: redacted@yahoo.com')
      .replace('To: reader@yahoo.com', 'To: redacted@yahoo.com');
    expect(parseReport(Buffer.from(raw))).toMatchObject({ kind: 'arf', recipient: null });
  });
});

describe('parseReport: line ends', () => {
  it('reads every fixture the same with CRLF line ends, as mail arrives over SMTP', () => {
    for (const name of readdirSync(new URL('./fixtures/reports/', import.meta.url))) {
      const lf = fixture(name);
      const crlf = Buffer.from(lf.toString('utf8').replace(/\n/g, '\r\n'));
      expect(parseReport(crlf), name).toEqual(parseReport(lf));
    }
  });
});

describe('parseReport: the rest', () => {
  it('reads a plain-text bounce with no delivery-status part by the status code in its text', () => {
    expect(parseReport(fixture('plain-undelivered.eml'))).toEqual({
      kind: 'plain',
      recipients: [
        {
          recipient: 'old.user@legacy.example',
          original_recipient: null,
          action: 'failed',
          status: '5.2.2',
          smtp_code: 552,
          diagnostic: '552 5.2.2',
          remote_mta: null,
        },
      ],
      original: null,
    });
  });

  it('reads no status code out of a message that does not say it is a bounce', () => {
    const reply = 'From: Ann <ann@example.com>\r\nSubject: Re: Your order\r\n\r\nI upgraded to version 5.1.1 and it still fails.';
    expect(parseReport(Buffer.from(reply)).kind).toBe('unknown');
    expect(parseReport(Buffer.from(reply.replace('Re: Your order', 'Undelivered Mail Returned to Sender'))).kind).toBe('plain');
  });

  it('calls a report with no recipient block unrecognised, and says why', () => {
    expect(parseReport(fixture('report-no-parts.eml'))).toEqual({
      kind: 'unknown',
      reason: 'a multipart/report (report-type=delivery-status) with no part this parser reads',
      original: null,
    });
  });

  it('survives binary junk, an empty message and a header section with no end', () => {
    let seed = 7;
    const junk = Buffer.from(Array.from({ length: 64 * 1024 }, () => (seed = (seed * 1103515245 + 12345) & 0xff)));
    for (const raw of [
      junk,
      Buffer.alloc(0),
      Buffer.from('Subject: x\r\nContent-Type: multipart/report; boundary=a\r\n--a\r\n'),
    ]) {
      expect(parseReport(raw).kind).toBe('unknown');
    }
  });

  it('stops at its depth limit on a message nested within itself', () => {
    let raw = 'Subject: inner\r\n\r\nno status here';
    for (let i = 0; i < 50; i++) raw = `Content-Type: message/rfc822\r\n\r\n${raw}`;
    expect(parseReport(Buffer.from(raw)).kind).toBe('unknown');
  });
});
