// Style M: every Gatepost error code as Mailgun answers, in one table. Mailgun's body is
// `{"message": "…"}`, except a bad key: a plain-text 401 `Forbidden`. mailgun.js turns any answer
// of 400 or more into an error whose `status` is the status and `details` the message.
import type { FastifyReply } from 'fastify';
import type { ErrorCode, ErrorDetail, GatepostError } from '../../../errors/errors.catalog.ts';
import { refusalHeaders } from '../compat.errors.ts';

interface Answer {
  status: number;
  /** Mailgun's own words, where its users know them; else Gatepost's message. */
  message?: string;
}

// Policy refusals are 400s: Mailgun refuses every request it will not send with 400. Idempotency
// is a Gatepost extension (the Idempotency-Key header), so a key still in flight keeps 409.
const table: Record<ErrorCode, Answer> = {
  invalid_request: { status: 400 },
  missing_api_key: { status: 401, message: 'Forbidden' },
  invalid_api_key: { status: 401, message: 'Forbidden' },
  key_not_allowed: { status: 403 },
  insufficient_scope: { status: 403 },
  origin_not_allowed: { status: 403 },
  not_found: { status: 404 },
  receipt_not_found: { status: 404 },
  contact_not_found: { status: 404 },
  template_exists: { status: 400 },
  // Sending domains are managed through the native API only.
  domain_exists: { status: 400 },
  domain_taken: { status: 400 },
  // The webhook API is native only: these never reach this ingress, but every code has a row.
  inbound_route_exists: { status: 409 },
  contact_exists: { status: 409 },
  csv_invalid: { status: 422 },
  automation_step_unknown: { status: 422 },
  automation_cycle: { status: 422 },
  automation_wait_out_of_range: { status: 422 },
  broadcast_already_sent: { status: 409 },
  broadcast_not_draft: { status: 409 },
  broadcast_not_cancellable: { status: 409 },
  audience_empty: { status: 422 },
  send_at_out_of_range: { status: 422 },
  webhook_disabled: { status: 409 },
  webhook_delivery_not_failed: { status: 409 },
  webhook_url_refused: { status: 400 },
  idempotency_key_in_flight: { status: 409 },
  message_too_large: { status: 413 },
  recipient_suppressed: { status: 400 },
  inbound_domain_not_verified: { status: 400 },
  tracking_host_invalid: { status: 400 },
  attachments_unsupported: { status: 400 },
  idempotency_key_reused: { status: 400 },
  recipient_not_allowed: { status: 400 },
  template_has_no_recipient: { status: 400 },
  template_not_found: { status: 400 },
  template_render_failed: { status: 400 },
  render_limit_exceeded: { status: 400 },
  // Mailgun refuses a send from a domain it may not send for with 403 "Domain <name> is not allowed to send: …".
  sender_not_verified: { status: 403 },
  sender_required: { status: 400, message: "'from' parameter is missing, and the tenant has no default sender" },
  rate_limited: { status: 429 },
  quota_exceeded: { status: 429 },
  storage_unavailable: { status: 503 },
  internal_error: { status: 500 },
};

/** "'to' parameter is missing", as Mailgun words a parameter at fault. */
function sentence({ field, message }: ErrorDetail): string {
  if (!field) return message;
  return /^(is|must|allows) /.test(message) ? `'${field}' parameter ${message}` : `'${field}' parameter is invalid: ${message}`;
}

export function mailgunError(error: GatepostError): { status: number; message: string } {
  const answer = table[error.code];
  const message =
    error.code === 'invalid_request' && error.details?.length
      ? error.details.map(sentence).join('; ')
      : (answer.message ?? error.message);
  return { status: answer.status, message };
}

export function sendMailgunError(reply: FastifyReply, error: GatepostError): FastifyReply {
  const { status, message } = mailgunError(error);
  refusalHeaders(reply, error);
  if (status === 401) return reply.code(401).type('text/plain; charset=utf-8').send(message);
  return reply.code(status).send({ message });
}
