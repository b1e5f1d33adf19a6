// The browser SDK endpoints, compatible with EmailJS: POST /api/v1.0/email/send (JSON) and
// /api/v1.0/email/send-form (multipart), so that @emailjs/browser, pointed at Gatepost with its
// `origin` option, works unchanged. A page holds a public key (gp_public_, or gp_sandbox_ to
// test); it names a template and fills its placeholders, and the template alone says who receives
// the mail. Each request: parse, resolve the key, check the origin against the key's allow-list,
// take from the rate limits, then the gate (which refuses any address a browser draft might name).
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import { browserRate } from '../../../tenancy/keys.ts';
import { codedError, idempotencyKeyHeader } from '../../rest/route.ts';
import type { CompatDeps, CompatIngress } from '../compat.ingress.ts';
import { formError } from '../compat.errors.ts';
import { MESSAGE_ID_HEADER, sendRefusal, sendText } from './browser.answer.ts';
import { allowReading, checkOrigin, preflight, withholdReading } from './browser.cors.ts';
import { fromForm, fromJson, type BrowserSend } from './browser.map.ts';
import { browserOperations, SEND_FORM_URL, SEND_URL } from './browser.operations.ts';
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

/** How the browser SDK words Fastify's own refusals (bad JSON, wrong content type, too large). */
const REFUSAL_WORDS = {
  tooLarge: 'The request is too large',
  contentType: 'The send endpoint takes JSON (Content-Type: application/json); send-form takes multipart/form-data',
  invalidJson: 'The request body is not valid JSON',
};

export function browserIngress(deps: CompatDeps): CompatIngress {
  const limiter = new BrowserRateLimiter();

  async function admit({ userId, draft }: BrowserSend, request: FastifyRequest, reply: FastifyReply) {
    const sender = await deps.keys.resolve(userId);
    checkOrigin(sender.key.allowed_origins, request.headers.origin);
    const taken = limiter.take(sender.key.id, request.ip, browserRate(sender.key.rate_limit));
    if (!taken.ok) {
      throw new GatepostError('rate_limited', 'Too many sends with this key; see Retry-After.', {
        retryAfter: taken.retryAfterSeconds,
      });
    }
    const idempotencyKey = idempotencyKeyHeader(request);
    const { response, replayed } = await deps.gate.admit({ sender, ingress: 'browser', draft, idempotencyKey });
    reply.header(MESSAGE_ID_HEADER, response.id);
    if (replayed) reply.header('Idempotent-Replayed', 'true');
    return sendText(reply, 200, 'OK');
  }

  const plugin: FastifyPluginAsync = async (app) => {
    await app.register(multipart, { limits: FORM_LIMITS });
    app.addHook('onRequest', async (request, reply) => allowReading(request, reply));
    app.setErrorHandler((error, _request, reply) => {
      const refusal = codedError(error, REFUSAL_WORDS, deps.log);
      if (refusal.code === 'origin_not_allowed') withholdReading(reply);
      return sendRefusal(reply, refusal);
    });
    for (const url of [SEND_URL, SEND_FORM_URL]) app.options(url, async (request, reply) => preflight(request, reply));
    app.post(SEND_URL, async (request, reply) => {
      if (request.isMultipart())
        throw new GatepostError('invalid_request', 'The send endpoint takes JSON; post forms to send-form');
      return admit(fromJson(request.body), request, reply);
    });
    app.post(SEND_FORM_URL, async (request, reply) => admit(await readForm(request), request, reply));
  };

  return { plugin, operations: browserOperations };
}
