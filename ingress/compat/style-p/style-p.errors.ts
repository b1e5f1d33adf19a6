// Every Style P failure on the wire: HTTP status, Postmark's numeric ErrorCode and a Message the
// official clients understand. Coded errors from the gate become Style P answers here, and only
// here (docs/compat-style-p.md shows the same table).
import type { FastifyError } from 'fastify';
import { GatepostError, errorCatalog, type ErrorCode, type ErrorDetail } from '../../../errors/errors.catalog.ts';
import type { StylePError } from './style-p.schema.ts';

export interface StylePFailure {
  status: number;
  body: StylePError;
  /** Seconds, for a Retry-After header. */
  retryAfter?: number;
}

/** Postmark's codes (its API overview), for the refusals Postmark has one for. */
export const POSTMARK = {
  badToken: 10,
  maintenance: 100,
  invalidRequest: 300,
  invalidJson: 402,
  senderSignatureNotFound: 400,
  inactiveRecipient: 406,
  jsonRequired: 409,
  tooManyBatchMessages: 410,
  rateLimited: 429,
  templateNotFound: 1101,
} as const;

/**
 * The table. A code not listed follows its HTTP status: a refusal (4xx) is an invalid request
 * (422, ErrorCode 300), a failure of ours (5xx) keeps its status with ErrorCode 100.
 */
const TABLE: Partial<Record<ErrorCode, { status: number; errorCode: number }>> = {
  missing_api_key: { status: 401, errorCode: POSTMARK.badToken },
  invalid_api_key: { status: 401, errorCode: POSTMARK.badToken },
  // Postmark knows one kind of refused token; the official client raises InvalidAPIKeyError.
  key_not_allowed: { status: 401, errorCode: POSTMARK.badToken },
  recipient_suppressed: { status: 422, errorCode: POSTMARK.inactiveRecipient },
  sender_not_verified: { status: 422, errorCode: POSTMARK.senderSignatureNotFound },
  template_not_found: { status: 422, errorCode: POSTMARK.templateNotFound },
  not_found: { status: 404, errorCode: POSTMARK.invalidRequest },
  receipt_not_found: { status: 404, errorCode: POSTMARK.invalidRequest },
  contact_not_found: { status: 404, errorCode: POSTMARK.invalidRequest },
  rate_limited: { status: 429, errorCode: POSTMARK.rateLimited },
  quota_exceeded: { status: 429, errorCode: POSTMARK.rateLimited },
  // "Retry in a moment": the official client's RateLimitExceededError, the one callers retry.
  idempotency_key_in_flight: { status: 429, errorCode: POSTMARK.rateLimited },
};

export function statusAndCode(code: ErrorCode): { status: number; errorCode: number } {
  const listed = TABLE[code];
  if (listed) return listed;
  const status = errorCatalog[code].status;
  return status >= 500 ? { status, errorCode: POSTMARK.maintenance } : { status: 422, errorCode: POSTMARK.invalidRequest };
}

// Gatepost's field names, as the Style P sender wrote them.
const WIRE_FIELDS: Record<string, string> = {
  from: 'From',
  to: 'To',
  cc: 'Cc',
  bcc: 'Bcc',
  reply_to: 'ReplyTo',
  subject: 'Subject',
  html: 'HtmlBody',
  text: 'TextBody',
  headers: 'Headers',
  tags: 'Tag',
  template: 'TemplateAlias',
  attachments: 'Attachments',
};

const wireField = (field: string) => field.replace(/^[a-z_]+/, (head) => WIRE_FIELDS[head] ?? head);

const listed = (details: ErrorDetail[]) => details.map((d) => `${wireField(d.field)}: ${d.message}`).join('; ');

/** The suppressed address a recipient_suppressed refusal names (the message actor's wording). */
function suppressedAddress(error: GatepostError): string | null {
  return /^(\S+@\S+) is suppressed/.exec(error.message)?.[1] ?? null;
}

/**
 * The official clients read the inactive addresses out of this sentence (postmark.js:
 * InactiveRecipientsError.recipients matches "Found inactive addresses: <list>. Inactive").
 */
export function inactiveMessage(addresses: string[]): string {
  return (
    'The message was not sent: a recipient is suppressed (bounced, complained or unsubscribed). ' +
    `Found inactive addresses: ${addresses.join(', ')}. Inactive addresses stay suppressed until removed from the suppression list.`
  );
}

/** Postmark's sentence for a From it has no Sender Signature for; the address comes from the gate's message. */
function senderSignatureMessage(error: GatepostError): string {
  const address = /^The from address (\S+@\S+) /.exec(error.message)?.[1];
  return address
    ? `The 'From' address you supplied (${address}) is not a Sender Signature on your account. Please add and confirm this address in order to be able to use it in the 'From' field of your messages.`
    : error.message;
}

function messageOf(error: GatepostError, all: GatepostError[]): string {
  if (error.code === 'sender_not_verified') return senderSignatureMessage(error);
  if (error.code === 'recipient_suppressed') {
    const addresses = all.filter((e) => e.code === 'recipient_suppressed').map(suppressedAddress);
    if (addresses.every((a) => a !== null)) return inactiveMessage([...new Set(addresses)]);
  }
  if (error.code === 'invalid_request' && error.details?.length) return `Invalid request: ${listed(error.details)}.`;
  return error.message;
}

/**
 * The answer for a refused message. With several refusals (one message per To address), the
 * first decides the code; an inactive-recipient answer lists every suppressed address.
 */
export function stylePFailure(error: GatepostError, all: GatepostError[] = [error]): StylePFailure {
  const { status, errorCode } = statusAndCode(error.code);
  return {
    status,
    body: { ErrorCode: errorCode, Message: messageOf(error, all) },
    ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
    ...(error.code === 'idempotency_key_in_flight' ? { retryAfter: 1 } : {}),
  };
}

/** Failures before any Style P code runs: the body's encoding, size and syntax. */
export function wireFailure(error: FastifyError): StylePFailure | null {
  const refuse = (status: number, ErrorCode: number, Message: string): StylePFailure => ({
    status,
    body: { ErrorCode, Message },
  });
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return refuse(413, POSTMARK.invalidRequest, 'The request body is too large.');
  if (error.statusCode === 415)
    return refuse(415, POSTMARK.jsonRequired, 'Send the body as JSON, with "Content-Type: application/json".');
  if (
    error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    error instanceof SyntaxError
  )
    return refuse(422, POSTMARK.invalidJson, `The body is not valid JSON: ${error.message}`);
  if (error.statusCode && error.statusCode < 500) return refuse(422, POSTMARK.invalidRequest, error.message);
  return null;
}
