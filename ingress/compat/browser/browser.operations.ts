// The browser SDK endpoints as the OpenAPI document shows them.
import { z } from 'zod';
import type { CompatOperation } from '../compat.ingress.ts';
import { FormControls, SendJson } from './browser.map.ts';

export const SEND_URL = '/api/v1.0/email/send';
export const SEND_FORM_URL = '/api/v1.0/email/send-form';

const text = (description: string) => ({
  description,
  schema: z.string().meta({ description: 'A plain-text sentence, as EmailJS answers.' }),
  contentType: 'text/plain',
});

const AUTH =
  'a public key (gp_public_…, or gp_sandbox_… to test) in user_id; the request must come from one of the ' +
  "key's allowed_origins (if it has any). The recipient is the template's stored `to`, never the request's";

const responses: CompatOperation['responses'] = {
  200: text('"OK": committed to the durable queue (header Gatepost-Message-Id names the message).'),
  400: text('A parameter is missing or invalid, the key is unknown ("The Public Key is invalid"), or the template is unknown.'),
  403: text('A live key (never usable from a browser), or an origin the key does not allow (without CORS headers).'),
  413: text('The request or the rendered message is too large.'),
  422: text('Refused: suppressed recipient, template without a stored recipient, attachments, or an idempotency key reused.'),
  429: text("\"Too Many Requests\": over the key's or the client IP's sends per minute, or the tenant's quota; see Retry-After."),
};

const preflight = (url: string): CompatOperation => ({
  method: 'OPTIONS',
  url,
  summary: "CORS preflight: answered for any origin; the key's allowed origins are checked on the POST itself",
  tag: 'Browser SDK',
  auth: 'none (a preflight carries no body, so no key)',
  responses: {
    204: { description: 'Access-Control-Allow-Methods: POST; Access-Control-Allow-Headers: Content-Type, Idempotency-Key.' },
  },
});

export const browserOperations: CompatOperation[] = [
  {
    method: 'POST',
    url: SEND_URL,
    summary: 'Send a stored template from a browser (EmailJS `send`)',
    tag: 'Browser SDK',
    auth: AUTH,
    body: { 'application/json': SendJson },
    responses,
  },
  {
    method: 'POST',
    url: SEND_FORM_URL,
    summary: 'Send a stored template from a browser form (EmailJS `sendForm`); files are refused',
    tag: 'Browser SDK',
    auth: AUTH,
    body: {
      'multipart/form-data': FormControls.catchall(z.string()).meta({
        description: 'The control fields, and every form input as a template param. A file input with a file is refused (422).',
      }),
    },
    responses,
  },
  preflight(SEND_URL),
  preflight(SEND_FORM_URL),
];
