// Every failure a user can meet: a stable code, its HTTP status, its SMTP reply and a default
// human message. Actors and the gate throw GatepostError with a code; each ingress maps it to
// its wire format at the edge. Codes survive serialization across actor calls; instanceof does not.

export const errorCatalog = {
  invalid_request: { status: 400, smtp: [501, '5.5.4'], message: 'The request is invalid.' },
  missing_api_key: {
    status: 401,
    smtp: [530, '5.7.0'],
    message: 'No API key was given. Send it as "Authorization: Bearer <API_KEY>".',
  },
  invalid_api_key: { status: 401, smtp: [535, '5.7.8'], message: 'The API key is unknown or has been revoked.' },
  key_not_allowed: { status: 403, smtp: [550, '5.7.1'], message: 'This key may not be used here.' },
  insufficient_scope: {
    status: 403,
    smtp: [550, '5.7.1'],
    message: 'This key may not do this: a sandbox key or a sending_access key only sends and reads messages.',
  },
  origin_not_allowed: {
    status: 403,
    smtp: [550, '5.7.1'],
    message: "This key does not send from this origin; add the origin to the key's allowed_origins.",
  },
  not_found: { status: 404, smtp: [550, '5.1.0'], message: 'Not found.' },
  receipt_not_found: { status: 404, smtp: [550, '5.1.0'], message: 'The message has no delivery receipt yet.' },
  contact_not_found: {
    status: 404,
    // 5.1.0 as not_found: 5.1.1 is recipient_suppressed's, and an SMTP client reads a reply by its codes.
    smtp: [550, '5.1.0'],
    message: 'The email is not a contact of the audience of any automation this event starts.',
  },
  template_exists: { status: 409, smtp: [554, '5.6.0'], message: 'A template with that slug already exists.' },
  domain_exists: { status: 409, smtp: [554, '5.6.0'], message: 'This tenant already has a sending domain with that name.' },
  domain_taken: {
    status: 409,
    smtp: [554, '5.6.0'],
    message: 'Another tenant has verified this domain; it cannot be added or verified here.',
  },
  inbound_route_exists: {
    status: 409,
    smtp: [554, '5.6.0'],
    message: 'This tenant already has an inbound route with that match.',
  },
  contact_exists: { status: 409, smtp: [554, '5.6.0'], message: 'The audience already has a contact with that email.' },
  broadcast_already_sent: {
    status: 409,
    smtp: [554, '5.6.0'],
    message: 'Only a draft can be sent; this broadcast was sent (or scheduled, or cancelled) already.',
  },
  broadcast_not_draft: {
    status: 409,
    smtp: [554, '5.6.0'],
    message: 'Only a draft can be deleted; cancel a broadcast that is scheduled or sending.',
  },
  broadcast_not_cancellable: {
    status: 409,
    smtp: [554, '5.6.0'],
    message: 'Only a scheduled, sending or paused broadcast can be cancelled.',
  },
  webhook_disabled: { status: 409, smtp: [554, '5.6.0'], message: 'The webhook endpoint is disabled.' },
  webhook_delivery_not_failed: {
    status: 409,
    smtp: [554, '5.6.0'],
    message: 'Only an event whose delivery failed can be redelivered by hand.',
  },
  idempotency_key_in_flight: {
    status: 409,
    smtp: [451, '4.5.0'],
    message: 'A request with this idempotency key is still under way; retry it in a moment.',
  },
  message_too_large: { status: 413, smtp: [552, '5.3.4'], message: 'The message is larger than allowed.' },
  recipient_suppressed: {
    status: 422,
    smtp: [550, '5.1.1'],
    message: 'The recipient is on the suppression list (bounced, complained or unsubscribed).',
  },
  inbound_domain_not_verified: {
    status: 422,
    smtp: [550, '5.7.1'],
    message: "The route's domain is not a verified domain of this tenant with its inbound MX record found.",
  },
  tracking_host_invalid: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'The tracking host is not a host name under the sending domain.',
  },
  attachments_unsupported: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'Attachments are not supported; the message was not sent.',
  },
  idempotency_key_reused: {
    status: 422,
    smtp: [554, '5.5.0'],
    message: 'This idempotency key was already used with a different request.',
  },
  csv_invalid: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'The CSV file cannot be read; nothing was imported.',
  },
  automation_step_unknown: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'A step of the automation names a step it does not have (or one of the wrong kind).',
  },
  automation_cycle: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: "The automation's steps go round in a cycle; a run must reach its end.",
  },
  automation_wait_out_of_range: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'A wait step is shorter than 1 second, longer than 30 days, or not a duration.',
  },
  audience_empty: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'The audience has no contacts: there is nobody to send the broadcast to.',
  },
  send_at_out_of_range: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'send_at is in the past or more than 30 days ahead.',
  },
  webhook_url_refused: {
    status: 422,
    smtp: [554, '5.7.1'],
    message: 'The webhook URL is refused: it must be https and reach a public address.',
  },
  recipient_not_allowed: {
    status: 422,
    smtp: [550, '5.7.1'],
    message: 'A browser send cannot choose addresses; the template stores them.',
  },
  template_has_no_recipient: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'The template stores no recipient, so it cannot be sent from a browser.',
  },
  template_not_found: { status: 422, smtp: [554, '5.6.0'], message: 'No template has that slug.' },
  template_render_failed: { status: 422, smtp: [554, '5.6.0'], message: 'The template could not be rendered.' },
  render_limit_exceeded: {
    status: 422,
    smtp: [554, '5.6.0'],
    message: 'Rendering the template went over a limit (source or output size, loop iterations, time or memory).',
  },
  sender_not_verified: {
    status: 422,
    smtp: [550, '5.7.1'],
    message: "The from address's domain is not a verified sending domain of this tenant (POST /v1/domains).",
  },
  sender_required: {
    status: 422,
    smtp: [553, '5.1.7'],
    message: 'No "from" was given and the tenant has no default sender.',
  },
  rate_limited: { status: 429, smtp: [451, '4.7.1'], message: 'Too many sends per second for this tenant.' },
  quota_exceeded: { status: 429, smtp: [452, '4.5.3'], message: 'The daily send quota of this tenant is used up.' },
  storage_unavailable: { status: 503, smtp: [451, '4.3.0'], message: 'The message store is unavailable.' },
  internal_error: { status: 500, smtp: [451, '4.3.0'], message: 'Something went wrong on our side.' },
} as const satisfies Record<string, { status: number; smtp: readonly [number, string]; message: string }>;

export type ErrorCode = keyof typeof errorCatalog;

export interface ErrorDetail {
  field: string;
  message: string;
}

/** The serialized form of a coded error: what crosses actor calls and reaches clients. */
export interface CodedErrorBody {
  code: ErrorCode;
  message: string;
  details?: ErrorDetail[];
  /** Seconds after which a retry may succeed (429). */
  retry_after?: number;
}

export class GatepostError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message?: string, opts: { details?: ErrorDetail[]; retryAfter?: number } = {}) {
    super(message ?? errorCatalog[code].message);
    this.name = 'GatepostError';
    this.code = code;
    this.details = opts.details;
    this.retryAfter = opts.retryAfter;
  }

  get status(): number {
    return errorCatalog[this.code].status;
  }

  toBody(): CodedErrorBody {
    return {
      code: this.code,
      message: this.message,
      ...(this.details ? { details: this.details } : {}),
      ...(this.retryAfter !== undefined ? { retry_after: this.retryAfter } : {}),
    };
  }

  static fromBody(body: CodedErrorBody): GatepostError {
    return new GatepostError(body.code, body.message, { details: body.details, retryAfter: body.retry_after });
  }
}

export function isCodedErrorBody(value: unknown): value is CodedErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    (value as { code: string }).code in errorCatalog
  );
}

export function invalid(details: ErrorDetail[], message = 'The request is invalid.'): GatepostError {
  return new GatepostError('invalid_request', message, { details });
}
