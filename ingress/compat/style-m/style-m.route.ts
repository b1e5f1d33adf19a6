// Style M: Mailgun's messages API, `POST /v3/:domain/messages` as multipart/form-data or
// urlencoded with HTTP Basic `api:<key>`, so that mailgun.js works unchanged against Gatepost.
// Answers `{"id", "message": "Queued. Thank you."}`, or Mailgun's `{"message"}` errors.
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { GatepostError, invalid } from '../../../errors/errors.catalog.ts';
import { ItemRefused, type Sender } from '../../../gate/gate.ts';
import type { KeyRing } from '../../../tenancy/keys.ts';
import { authenticateIn, permissionHook } from '../../rest/auth.hooks.ts';
import { codedError, idempotencyKeyHeader } from '../../rest/errors.http.ts';
import { answer, documentationOnly } from '../../rest/schema.http.ts';
import { compatDoc, type CompatDeps, type CompatIngress } from '../compat.ingress.ts';
import { admitAllOrNothing, admittedHeaders } from '../compat.admission.ts';
import { BODY_TOO_LARGE } from '../compat.errors.ts';
import { MAX_FORM_BYTES, readForm } from './style-m.form.ts';
import { parseMessage } from '../../smtp/submission.drafts.ts';
import { inRequestTerms, itemsOf, messageParameters, mimeItemsOf, mimeParameters, type MailgunItem } from './style-m.map.ts';
import { sendMailgunError } from './style-m.errors.ts';
import { isDomainName } from '../../../mail/address.ts';
import { Forbidden, MailgunErrorBody, MailgunMessage, MailgunMimeMessage, MailgunQueued } from './style-m.schema.ts';

const URL = '/v3/:domain/messages';
const URL_MIME = '/v3/:domain/messages.mime';

/** HTTP Basic with the user `api` and the key as the password, as Mailgun takes its keys. */
async function authenticate(keys: KeyRing, request: FastifyRequest): Promise<Sender> {
  const header = request.headers.authorization;
  if (!header) throw new GatepostError('missing_api_key');
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  const credentials = m ? Buffer.from(m[1]!, 'base64').toString() : '';
  const colon = credentials.indexOf(':');
  if (colon < 0 || credentials.slice(0, colon) !== 'api') throw new GatepostError('invalid_api_key');
  return keys.resolve(credentials.slice(colon + 1));
}

export function styleM(deps: CompatDeps): CompatIngress {
  const plugin: FastifyPluginAsync = async (app) => {
    // Form bodies only, in this scope: Mailgun takes no JSON.
    app.removeContentTypeParser('application/json');
    await app.register(formbody);
    await app.register(multipart, { limits: { fieldSize: MAX_FORM_BYTES, fileSize: MAX_FORM_BYTES, parts: 5000 } });
    app.setErrorHandler((error, _request, reply) =>
      sendMailgunError(
        reply,
        codedError(
          error,
          {
            tooLarge: BODY_TOO_LARGE,
            contentType: 'Send the message as multipart/form-data or application/x-www-form-urlencoded.',
          },
          deps.log,
        ),
      ),
    );
    /** Admits the request's messages, all or none, and answers as Mailgun does. */
    async function queue(
      request: FastifyRequest<{ Params: { domain: string } }>,
      reply: FastifyReply,
      sender: Sender,
      items: MailgunItem[],
    ) {
      // It is written into the answer's message id.
      if (!isDomainName(request.params.domain)) throw invalid([{ field: 'domain', message: 'is not a domain name' }]);
      const admitted = await admitAllOrNothing(deps.gate, {
        sender,
        ingress: 'style_m',
        items,
        idempotencyKey: idempotencyKeyHeader(request),
        requestId: request.id,
      }).catch((error: unknown) => {
        throw error instanceof ItemRefused ? inRequestTerms(error, items[error.item]!) : error;
      });
      admittedHeaders(reply, admitted);
      // Mailgun names a request's messages by one id; Gatepost gives the first message's, in
      // Mailgun's form, and every message's in Gatepost-Message-Ids.
      return { id: `<${admitted.responses[0]!.id}@${request.params.domain}>`, message: 'Queued. Thank you.' };
    }

    authenticateIn(app, async (request) => {
      request.sender = await authenticate(deps.keys, request);
    });
    app.addHook('onRequest', permissionHook);
    const error = (description: string) => answer(description, MailgunErrorBody);
    const response = {
      200: answer('Every message committed. `Gatepost-Message-Ids`: every message id (msg_…), in order.', MailgunQueued),
      400: error('Invalid, or refused by policy (suppressed recipient, attachments, unknown template): nothing was sent.'),
      401: answer('Missing, unknown or revoked key.', Forbidden, 'text/plain'),
      403: error('This key may not send mail (public keys are for the browser SDK).'),
      409: error('A request with this Idempotency-Key is still under way.'),
      413: error('The request or a rendered message is too large.'),
      429: error("Over the tenant's quota; see `Retry-After`."),
    };
    // The form is read and validated by the handler (readForm), in Mailgun's words.
    const documented = (summary: string, body: z.ZodType) => ({
      config: { access: 'send' as const },
      schema: {
        tags: ['Style M (Mailgun)'],
        summary,
        ...compatDoc('HTTP Basic, user `api`, password a gp_live_ or gp_sandbox_ key. Any domain is accepted'),
        consumes: ['multipart/form-data', 'application/x-www-form-urlencoded'],
        body: documentationOnly(body),
        response,
      },
    });
    const send = documented('Send a message as Mailgun does (one message per recipient, all or none)', MailgunMessage);
    const sendMime = documented('Send a MIME message as Mailgun does (one message per `to`, all or none)', MailgunMimeMessage);

    app.post<{ Params: { domain: string } }>(URL, send, async (request, reply) => {
      const sender = request.sender!;
      const form = await readForm(request);
      return queue(request, reply, sender, itemsOf(messageParameters(form), form.attachments));
    });

    app.post<{ Params: { domain: string } }>(URL_MIME, sendMime, async (request, reply) => {
      const sender = request.sender!;
      const form = await readForm(request, { mime: true });
      const parameters = mimeParameters(form);
      if (!form.mime?.length) throw invalid([{ field: 'message', message: 'is missing' }]);
      return queue(request, reply, sender, mimeItemsOf(parameters, await parseMessage(form.mime), form.attachments));
    });
  };

  return { plugin, refuseUrl: { urls: [URL, URL_MIME], answer: sendMailgunError } };
}
