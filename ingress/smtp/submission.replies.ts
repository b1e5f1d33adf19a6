// What SMTP submission answers, as data: a reply code, its enhanced status code (RFC 3463) and a
// sentence. Coded errors become the reply in the `smtp` column of the error catalogue, the one
// table for this edge; the few replies that are SMTP mechanics, not refusals of a message, are
// here too.
import { GatepostError, errorCatalog, type ErrorCode } from '../../errors/errors.catalog.ts';
import type { AdmitResult } from '../../gate/gate.ts';

export interface SmtpReply {
  code: number;
  /** The enhanced status code, e.g. `5.1.1`. */
  enhanced: string;
  text: string;
}

// RFC 5321 §4.5.3.1.5: a reply line is at most 512 octets with its code and CRLF.
const MAX_TEXT = 480;

/**
 * The line after the reply code. smtp-server leaves enhanced status codes to the application
 * (its own table would answer a full quota with 4.2.2, "mailbox full"), so each reply carries
 * the catalogue's in its text.
 */
export function replyLine({ enhanced, text }: SmtpReply): string {
  const line = `${enhanced} ${text.replace(/[\r\n\0]+/g, ' ')}`;
  return line.length <= MAX_TEXT ? line : `${line.slice(0, MAX_TEXT - 1)}…`;
}

// Catalogue sentences that speak of HTTP, told the way an SMTP client meets the same thing.
const SMTP_SENTENCES: Partial<Record<ErrorCode, string>> = {
  missing_api_key: 'Authenticate first: AUTH PLAIN or LOGIN, any user name, a Gatepost API key as the password.',
  idempotency_key_reused:
    'A message with this Message-ID was already sent to this recipient with other content; give each message its own Message-ID.',
  idempotency_key_in_flight: 'A message with this Message-ID is still being admitted; try again in a moment.',
};

export function replyFor(error: GatepostError): SmtpReply {
  const [code, enhanced] = errorCatalog[error.code].smtp;
  let text = SMTP_SENTENCES[error.code] ?? error.message;
  // "The request is invalid." alone would not say what to fix: name each field at fault.
  const details = error.details?.map((d) => `${d.field} ${d.message}`).join('; ');
  if (error.code === 'invalid_request' && details && !text.includes(details)) text = `${text.replace(/\.$/, '')}: ${details}.`;
  return { code, enhanced, text };
}

export const replies = {
  /** DATA accepted: one message per recipient, each committed before this reply. */
  queued(results: AdmitResult[]): SmtpReply {
    const ids = results.map((r) => r.response.id);
    const replayed = results.every((r) => r.replayed);
    const what = ids.length === 1 ? `as ${ids[0]}` : `${ids.length} messages: ${ids.join(' ')}`;
    return {
      code: 250,
      enhanced: '2.0.0',
      text: replayed ? `Already queued ${what} (the same Message-ID was sent before)` : `Queued ${what}`,
    };
  },

  /** RFC 3207 §4: MAIL on a connection that is not offered AUTH before STARTTLS (see authOffered). */
  tlsFirst: {
    code: 530,
    enhanced: '5.7.0',
    text: 'Must issue a STARTTLS command first: AUTH is offered over TLS (without it on loopback only), and a message needs AUTH.',
  } satisfies SmtpReply,

  /** A connection's last allowed failed AUTH (issue 20): 421 closes it (RFC 5321 §3.8). */
  sessionFailures: {
    code: 421,
    enhanced: '4.7.0',
    text: 'Too many failed authentications on this connection; closing it.',
  } satisfies SmtpReply,

  /** An address that failed AUTH too often lately; its connections are closed until the window ends. */
  tooManyFailures: (minutes: number): SmtpReply => ({
    code: 421,
    enhanced: '4.7.0',
    text: `Too many failed authentications from this address; try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  }),

  /** RFC 5321 §4.5.3.1.10: the client sends the others in another transaction. */
  tooManyRecipients: (max: number): SmtpReply => ({
    code: 452,
    enhanced: '4.5.3',
    text: `Too many recipients: at most ${max} per message; send to the others in another transaction.`,
  }),

  /** A failure of ours, not the sender's: nothing was accepted, and the client may retry. */
  failed: replyFor(
    new GatepostError('internal_error', 'Something went wrong on our side; nothing was accepted, try again later.'),
  ),
};
