// The one interface every way out implements (the relay, direct MX delivery): hand over the
// exact bytes for an envelope, get back what happened as data. Nothing here throws for a remote
// failure: a refusal, a timeout or a dropped connection is a DeliveryReport like an acceptance.
import { domainOf } from '../mail/address.ts';

/** The whole SMTP reply: its code, its enhanced status code (RFC 3463) when it has one, its text. */
export interface SmtpReply {
  code: number | null;
  enhanced: string | null;
  text: string;
}

/**
 * The SMTP stage a refusal or failure came at: `connect` (finding or reaching a host, its greeting,
 * EHLO, a dropped or silent connection), `mail` (MAIL FROM), `rcpt` (RCPT TO), `data` (DATA or the
 * end of the message).
 */
export type SmtpStage = 'connect' | 'mail' | 'rcpt' | 'data';

export interface DeliveryReport {
  /** accepted (2xx), permanent (5xx: do not retry), transient (4xx, no answer, a dropped connection). */
  result: 'accepted' | 'permanent' | 'transient';
  reply: SmtpReply;
  /** Where a refusal or failure came; null when the message was accepted. */
  stage: SmtpStage | null;
  /**
   * Recipients refused at RCPT TO, each with its own answer: while others were accepted (the
   * transaction went on without them, and its reply, even a refusal of the data, is theirs), or
   * every one of them (the report's reply is then the transaction's, and each recipient's outcome
   * is its own). Absent or empty when none was.
   */
  refused?: RecipientRefusal[];
  /** The host that answered (an MX host, or the relay), and its address; null when none did. */
  mx: string | null;
  ip: string | null;
  /** The TLS the message went over; null: plain text (or not known, through a relay). */
  tls: { version: string; cipher: string } | null;
  /** ISO times: when the connection that carried the attempt was made, when the message was accepted. */
  connected_at: string | null;
  accepted_at: string | null;
}

export interface RecipientRefusal {
  to: string;
  /** permanent (5xx) or transient (4xx). */
  result: 'permanent' | 'transient';
  reply: SmtpReply;
}

export interface Envelope {
  /** The return-path (MAIL FROM). */
  from: string;
  /** RCPT TO, one domain's recipients for direct delivery. */
  to: string[];
  /** The message as it goes on the wire. */
  raw: Buffer;
  /** The local address to connect from (GATEPOST_SOURCE_IPS, direct delivery); none: the host's route. */
  source?: string;
}

export interface Transport {
  /**
   * How an attempt's recipients are split into transactions, one `send` each: direct delivery
   * one per recipient domain (each has its own MX hosts), the relay one for all.
   */
  transactions(recipients: string[]): string[][];
  send(envelope: Envelope): Promise<DeliveryReport>;
  /**
   * The mailbox provider of a recipient domain (mta/provider.ts), where the transport finds the MX
   * hosts itself; absent behind a relay. Null: not known now.
   */
  providerOf?(domain: string): Promise<string | null>;
  /** Ends its connections. */
  close(): Promise<void>;
}

/** The recipients grouped by domain, in the order they first appear. */
export function byDomain(recipients: string[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const to of recipients) {
    const domain = domainOf(to);
    groups.set(domain, [...(groups.get(domain) ?? []), to]);
  }
  return [...groups.values()];
}

const REPLY = /^(\d{3})(?:[ -](\d\.\d{1,3}\.\d{1,3})(?=\s|$))?/;

/** Reads the code and enhanced status code at the front of a reply; the text is kept whole. */
export function parseReply(text: string): SmtpReply {
  const whole = text.trim();
  const m = REPLY.exec(whole);
  return { code: m ? Number(m[1]) : null, enhanced: m?.[2] ?? null, text: whole };
}

/** The stage of a failed nodemailer SMTP command (its error's `command`); anything before MAIL FROM, or a drop, is `connect`. */
export function stageOf(command: string | undefined): SmtpStage {
  if (command === 'MAIL FROM') return 'mail';
  if (command === 'RCPT TO') return 'rcpt';
  if (command === 'DATA') return 'data';
  return 'connect';
}

/** What an accepted transaction reports, whichever way it went: the reply, when, and any recipient refused on the way. */
export function acceptance(info: {
  response: string;
}): Pick<DeliveryReport, 'result' | 'reply' | 'stage' | 'accepted_at' | 'refused'> {
  const refused = refusedRecipients(info);
  return {
    result: 'accepted',
    reply: parseReply(info.response),
    stage: null,
    accepted_at: new Date().toISOString(),
    ...(refused.length > 0 ? { refused } : {}),
  };
}

/**
 * The recipients a server refused at RCPT TO (nodemailer's `rejectedErrors`): on the answer of a
 * transaction it accepted for others, or on the error when it refused every one.
 */
export function refusedRecipients(info: object): RecipientRefusal[] {
  const errors = (info as { rejectedErrors?: Array<{ recipient?: string; response?: string; responseCode?: number }> })
    .rejectedErrors;
  return (errors ?? []).flatMap((e) =>
    e.recipient && e.response
      ? [
          {
            to: e.recipient,
            result: (e.responseCode ?? 0) >= 500 ? ('permanent' as const) : ('transient' as const),
            reply: parseReply(e.response),
          },
        ]
      : [],
  );
}

/** A report with no server answer behind it: look-up failures, connections that never came up. */
export function unanswered(result: 'permanent' | 'transient', text: string): DeliveryReport {
  return {
    result,
    reply: { code: null, enhanced: null, text },
    stage: 'connect',
    mx: null,
    ip: null,
    tls: null,
    connected_at: null,
    accepted_at: null,
  };
}
