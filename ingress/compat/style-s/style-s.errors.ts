// Style S: every Gatepost error code as SendGrid answers, in one table. SendGrid's body is
// `{"errors": [{"message", "field", "help"}]}`; @sendgrid/mail turns any answer of 400 or more
// into a ResponseError whose `response.body.errors` is this list.
import type { FastifyReply } from 'fastify';
import type { ErrorCode, GatepostError } from '../../../errors/errors.catalog.ts';
import { refusalHeaders } from '../compat.errors.ts';
import type { SendGridErrorEntry } from './style-s.schema.ts';

interface Answer {
  status: number;
  /** SendGrid's own words, where its clients or users may know them; else Gatepost's message. */
  message?: string;
  /** The field named when the error names none itself. */
  field?: string;
}

// Policy refusals are 400s: SendGrid refuses every request it will not send with 400 (it has no
// 422). Idempotency is a Gatepost extension (the Idempotency-Key header), so a key still in
// flight keeps Gatepost's 409.
const table: Record<ErrorCode, Answer> = {
  invalid_request: { status: 400 },
  missing_api_key: { status: 401, message: 'authorization required' },
  invalid_api_key: { status: 401, message: 'The provided authorization grant is invalid, expired, or revoked' },
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
  attachments_unsupported: { status: 400, field: 'attachments' },
  idempotency_key_reused: { status: 400, field: 'Idempotency-Key' },
  recipient_not_allowed: { status: 400 },
  template_has_no_recipient: { status: 400, field: 'template_id' },
  template_not_found: { status: 400, field: 'template_id' },
  template_render_failed: { status: 400 },
  render_limit_exceeded: { status: 400 },
  // SendGrid's answer to a from address it has no verified Sender Identity for, word for word.
  sender_not_verified: {
    status: 403,
    message:
      'The from address does not match a verified Sender Identity. Mail cannot be sent until this error is resolved. Visit https://sendgrid.com/docs/for-developers/sending-email/sender-identity/ to see the Sender Identity requirements',
  },
  sender_required: { status: 400, field: 'from.email' },
  rate_limited: { status: 429 },
  quota_exceeded: { status: 429 },
  storage_unavailable: { status: 503 },
  internal_error: { status: 500 },
};

/** The error list of a Gatepost error: one entry per field at fault, or one for the whole request. */
export function sendGridErrors(error: GatepostError): { status: number; errors: SendGridErrorEntry[] } {
  const answer = table[error.code];
  const details = error.details ?? [];
  const errors =
    error.code === 'invalid_request' && details.length > 0
      ? details.map((d) => ({ message: d.message, field: d.field, help: null }))
      : [{ message: answer.message ?? error.message, field: details[0]?.field ?? answer.field ?? null, help: null }];
  return { status: answer.status, errors };
}

export function sendSendGridError(reply: FastifyReply, error: GatepostError): FastifyReply {
  const { status, errors } = sendGridErrors(error);
  refusalHeaders(reply, error);
  return reply.code(status).send({ errors });
}
