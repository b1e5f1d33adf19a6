// How the browser SDK endpoints answer: like EmailJS, a plain-text sentence and a status, which
// @emailjs/browser hands the page as EmailJSResponseStatus {status, text}. Every coded error
// becomes one here, through one table. EmailJS documents 200 "OK" and 400 "The user_id parameter
// is required"; its service answers an unknown key 400 "The Public Key is invalid. …", an unknown
// template 400 "The template ID not found. …" and an empty recipient 422 "The recipients address
// is empty" (as quoted in its users' reports), and its client makes 429 "Too Many Requests" itself.
// Our sentences begin as those do and say the rest in our words (docs/compat-browser.md lists them).
import type { FastifyReply } from 'fastify';
import { GatepostError, type ErrorCode } from '../../../errors/errors.catalog.ts';
import { refusalHeaders } from '../compat.errors.ts';

/** The message an accepted send became: `GET /v1/messages/:id` shows its timeline. */
export const MESSAGE_ID_HEADER = 'Gatepost-Message-Id';

interface Answer {
  status: number;
  /** The sentence; without one, the error's own message. */
  text?: (error: GatepostError) => string;
}

/** Where EmailJS's status or wording differs from the native API's; every other code keeps both. */
const ANSWERS: Partial<Record<ErrorCode, Answer>> = {
  // EmailJS refuses a missing or unknown key with 400, not 401.
  missing_api_key: { status: 400 },
  invalid_api_key: { status: 400, text: () => 'The Public Key is invalid. No public key has that value, or it was revoked.' },
  key_not_allowed: { status: 403 },
  origin_not_allowed: { status: 403 },
  // An unknown template id is a bad parameter to EmailJS (400); its text names the slug.
  template_not_found: { status: 400, text: (e) => `The template ID not found. ${e.message}` },
  template_has_no_recipient: {
    status: 422,
    text: (e) => `The recipients address is empty: ${e.message} A page can only send templates that store "to".`,
  },
  rate_limited: { status: 429, text: () => 'Too Many Requests' },
  quota_exceeded: { status: 429, text: () => 'Too Many Requests' },
  internal_error: { status: 500, text: () => 'Internal Server Error' },
};

export function sendText(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(text);
}

export function sendRefusal(reply: FastifyReply, error: GatepostError): FastifyReply {
  const answer = ANSWERS[error.code];
  refusalHeaders(reply, error);
  return sendText(reply, answer?.status ?? error.status, answer?.text?.(error) ?? error.message);
}
