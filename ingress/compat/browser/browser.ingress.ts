// The browser SDK endpoints: EmailJS's POST /api/v1.0/email/send (JSON) and
// /api/v1.0/email/send-form (multipart), so that @emailjs/browser, pointed at Gatepost with its
// `origin` option, works unchanged; and Gatepost's own POST /v1/browser/emails, which the browser
// bundle (sdk/browser) calls and which answers as the native API does (202 JSON, coded errors).
// A page holds a public key (gp_public_, or gp_sandbox_ to test); it names a template and fills
// its placeholders, and the template alone says who receives the mail. Each request: parse,
// resolve the key, check the origin against the key's allow-list, take from the rate limits, then
// the gate (which refuses any address a browser draft might name).
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import { browserRate } from '../../../tenancy/keys.ts';
import { z } from 'zod';
import type { SendDraft, Sender } from '../../../gate/gate.ts';
import { authenticateKey } from '../../rest/auth.hooks.ts';
import { codedError, idempotencyKeyHeader, sendError } from '../../rest/errors.http.ts';
import { answer, documentationOnly, refusal, withZod } from '../../rest/schema.http.ts';
import { SendResponse } from '../../rest/schemas.ts';
import { compatDoc, type CompatDeps, type CompatIngress } from '../compat.ingress.ts';
import { formError } from '../compat.errors.ts';
import { MESSAGE_ID_HEADER, sendRefusal, sendText } from './browser.answer.ts';
import { allowReading, checkOrigin, preflight, withholdReading } from './browser.cors.ts';
import { FormControls, fromForm, fromJson, SendJson, type BrowserSend } from './browser.map.ts';
import { BrowserRateLimiter } from './browser.ratelimit.ts';

/**
 * Form limits: EmailJS keeps a form's variables small. Files are read only to be counted and
 * refused; one over 16 MiB (the native API's body limit) is refused as too large instead.
 */
const FORM_LIMITS = { fieldSize: 256 * 1024, fields: 500, files: 20, fileSize: 16 * 1024 * 1024, parts: 520 };

/** The form's fields in order and how many files it carried, every part read to its end. */
async function readForm(request: FastifyRequest): Promise<BrowserSend> {
  if (!request.isMultipart()) {
    throw new GatepostError('invalid_request', 'The send-form endpoint takes multipart/form-data (a FormData body)');
  }
  const fields: [string, string][] = [];
  let files = 0;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        let bytes = 0;
        for await (const chunk of part.file) bytes += (chunk as Buffer).length;
        // A file input left empty is sent as a part with no name and no bytes: no attachment.
        if (part.filename !== '' || bytes > 0) files++;
      } else if (part.valueTruncated || part.fieldnameTruncated) {
        throw new GatepostError('message_too_large', `The form field ${part.fieldname} is over ${FORM_LIMITS.fieldSize} bytes`);
      } else {
        fields.push([part.fieldname, String(part.value)]);
      }
    }
  } catch (error) {
    throw formError(error);
  }
  return fromForm(fields, files);
}

export const SEND_URL = '/api/v1.0/email/send';
export const SEND_FORM_URL = '/api/v1.0/email/send-form';
export const NATIVE_SEND_URL = '/v1/browser/emails';

/** The body of the native browser send: a template and its data, and nothing that names an address. */
const NativeSend = z
  .object({
    template: z.string().min(1).meta({ description: 'The slug of a template that stores its recipient (`to`).' }),
    data: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "The template's {{placeholders}}. Data only: no value chooses or adds an address." }),
    stream: z.enum(['transactional', 'broadcast']).optional(),
  })
  .strict()
  .meta({ description: 'Any other field (`to`, `cc`, `from`, …) is refused (400): the template alone names the recipient.' });

const TAG = 'Browser SDK';

const text = (description: string) =>
  answer(description, z.string().meta({ description: 'A plain-text sentence, as EmailJS answers.' }), 'text/plain');

const AUTH =
  'a public key (gp_public_…, or gp_sandbox_… to test) in user_id; the request must come from one of the ' +
  "key's allowed_origins (if it has any). The recipient is the template's stored `to`, never the request's";

const responses = {
  200: text('"OK": committed to the durable queue (header Gatepost-Message-Id names the message).'),
  400: text('A parameter is missing or invalid, the key is unknown ("The Public Key is invalid"), or the template is unknown.'),
  403: text('A live key (never usable from a browser), or an origin the key does not allow (without CORS headers).'),
  413: text('The request or the rendered message is too large.'),
  422: text('Refused: suppressed recipient, template without a stored recipient, attachments, or an idempotency key reused.'),
  429: text("\"Too Many Requests\": over the key's or the client IP's sends per minute, or the tenant's quota; see Retry-After."),
};

/** The bodies are read and validated by the handlers (fromJson, readForm), in EmailJS's words. */
const SEND_DOC = {
  tags: [TAG],
  summary: 'Send a stored template from a browser (EmailJS `send`)',
  ...compatDoc(AUTH),
  body: documentationOnly(SendJson),
  response: responses,
};

const SEND_FORM_DOC = {
  tags: [TAG],
  summary: 'Send a stored template from a browser form (EmailJS `sendForm`); files are refused',
  ...compatDoc(AUTH),
  consumes: ['multipart/form-data'],
  body: documentationOnly(
    FormControls.catchall(z.string()).meta({
      description: 'The control fields, and every form input as a template param. A file input with a file is refused (422).',
    }),
  ),
  response: responses,
};

const NATIVE_SEND_DOC = {
  tags: [TAG],
  summary: "Send a stored template from a browser (the browser bundle's `send(template, params)`)",
  description:
    'Authentication: `Authorization: Bearer gp_public_…` (or gp_sandbox_… to test); the request must come from one of ' +
    "the key's allowed_origins (if it has any). The recipient is the template's stored `to`, never the request's. " +
    'Answers as `POST /v1/emails` does.',
  security: [],
  body: NativeSend,
  response: {
    202: answer('Committed to the durable queue (or a replay, with `Idempotent-Replayed: true`).', SendResponse),
    400: refusal('The body is invalid, or names a field other than template, data and stream.'),
    401: refusal('No key, or an unknown or revoked one.'),
    403: refusal('A live key (never usable from a browser), or an origin the key does not allow (without CORS headers).'),
    422: refusal(
      'Refused: unknown template, template without a stored recipient, suppressed recipient, or an idempotency key reused.',
    ),
    429: refusal("Over the key's or the client IP's sends per minute, or the tenant's quota; see Retry-After."),
  },
};

const PREFLIGHT_DOC = {
  tags: [TAG],
  summary: "CORS preflight: answered for any origin; the key's allowed origins are checked on the POST itself",
  ...compatDoc('none (a preflight carries no body, so no key)'),
  response: {
    204: answer('Access-Control-Allow-Methods: POST; Access-Control-Allow-Headers: Content-Type, Idempotency-Key, Authorization.'),
  },
};

/** How the browser SDK words Fastify's own refusals (bad JSON, wrong content type, too large). */
const REFUSAL_WORDS = {
  tooLarge: 'The request is too large',
  contentType: 'The send endpoint takes JSON (Content-Type: application/json); send-form takes multipart/form-data',
  invalidJson: 'The request body is not valid JSON',
};

/** How the native browser send words Fastify's own refusals. */
const NATIVE_WORDS = {
  tooLarge: 'The request body is too large.',
  contentType: 'Send the body as JSON with "Content-Type: application/json".',
};

export function browserIngress(deps: CompatDeps): CompatIngress {
  const limiter = new BrowserRateLimiter();

  /** A browser send of `sender`, held to its key's origins and rates, through the gate. */
  async function admit(sender: Sender, draft: SendDraft, request: FastifyRequest) {
    checkOrigin(sender.key.allowed_origins, request.headers.origin);
    const taken = limiter.take(sender.key.id, request.ip, browserRate(sender.key.rate_limit));
    if (!taken.ok) {
      throw new GatepostError('rate_limited', 'Too many sends with this key; see Retry-After.', {
        retryAfter: taken.retryAfterSeconds,
      });
    }
    return deps.gate.admit({
      sender,
      ingress: 'browser',
      draft,
      idempotencyKey: idempotencyKeyHeader(request),
      requestId: request.id,
    });
  }

  /** An EmailJS send: the key from the body, the answer a sentence. */
  async function admitEmailJs({ userId, draft }: BrowserSend, request: FastifyRequest, reply: FastifyReply) {
    const { response, replayed } = await admit(await deps.keys.resolve(userId), draft, request);
    reply.header(MESSAGE_ID_HEADER, response.id);
    if (replayed) reply.header('Idempotent-Replayed', 'true');
    return sendText(reply, 200, 'OK');
  }

  /** Gatepost's own browser send, in its own scope: native JSON answers and coded errors. */
  const native: FastifyPluginAsync = async (scope) => {
    scope.setErrorHandler((error, _request, reply) => {
      const refusal = codedError(error, NATIVE_WORDS, deps.log);
      if (refusal.code === 'origin_not_allowed') withholdReading(reply);
      return sendError(reply, refusal);
    });
    scope.options(NATIVE_SEND_URL, { schema: PREFLIGHT_DOC }, async (request, reply) => preflight(request, reply));
    withZod(scope).post(NATIVE_SEND_URL, { schema: NATIVE_SEND_DOC }, async (request, reply) => {
      const sender = await authenticateKey(deps.keys, request);
      const { template, data, stream } = request.body;
      const draft: SendDraft = { template, data: data ?? {}, attachments: 0, ...(stream ? { stream } : {}) };
      const { response, replayed } = await admit(sender, draft, request);
      if (replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(202).send(response);
    });
  };

  const plugin: FastifyPluginAsync = async (app) => {
    await app.register(multipart, { limits: FORM_LIMITS });
    app.addHook('onRequest', async (request, reply) => allowReading(request, reply));
    app.setErrorHandler((error, _request, reply) => {
      const refusal = codedError(error, REFUSAL_WORDS, deps.log);
      if (refusal.code === 'origin_not_allowed') withholdReading(reply);
      return sendRefusal(reply, refusal);
    });
    for (const url of [SEND_URL, SEND_FORM_URL]) {
      app.options(url, { schema: PREFLIGHT_DOC }, async (request, reply) => preflight(request, reply));
    }
    app.post(SEND_URL, { schema: SEND_DOC }, async (request, reply) => {
      if (request.isMultipart())
        throw new GatepostError('invalid_request', 'The send endpoint takes JSON; post forms to send-form');
      return admitEmailJs(fromJson(request.body), request, reply);
    });
    app.post(SEND_FORM_URL, { schema: SEND_FORM_DOC }, async (request, reply) =>
      admitEmailJs(await readForm(request), request, reply),
    );
    await app.register(native);
  };

  return { plugin };
}
