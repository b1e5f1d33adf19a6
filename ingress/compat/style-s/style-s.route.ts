// Style S: SendGrid's v3 Mail Send, `POST /v3/mail/send` with `Authorization: Bearer <key>`, so
// that @sendgrid/mail works unchanged against Gatepost. Answers 202 with an empty body and
// `X-Message-Id`, or SendGrid's error list.
import type { FastifyPluginAsync } from 'fastify';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import { ItemRefused } from '../../../gate/gate.ts';
import { authenticateIn, authenticateKey, permissionHook } from '../../rest/auth.hooks.ts';
import { codedError, idempotencyKeyHeader, zodDetails } from '../../rest/errors.http.ts';
import { answer, documentationOnly } from '../../rest/schema.http.ts';
import { compatDoc, type CompatDeps, type CompatIngress } from '../compat.ingress.ts';
import { admitAllOrNothing, admittedHeaders } from '../compat.admission.ts';
import { BODY_TOO_LARGE } from '../compat.errors.ts';
import { inRequestTerms, itemsOf, sandboxMode } from './style-s.map.ts';
import { sendSendGridError } from './style-s.errors.ts';
import { EmptyBody, SendGridErrorBody, SendGridMail } from './style-s.schema.ts';

const URL = '/v3/mail/send';

function parseMail(body: unknown): SendGridMail {
  const parsed = SendGridMail.safeParse(body);
  if (parsed.success) return parsed.data;
  const details = zodDetails(parsed.error).map((d) =>
    d.message === 'unknown field' ? { ...d, message: 'Gatepost does not support this field.' } : d,
  );
  throw new GatepostError('invalid_request', 'The request is invalid.', { details });
}

export function styleS(deps: CompatDeps): CompatIngress {
  const plugin: FastifyPluginAsync = async (app) => {
    app.setErrorHandler((error, _request, reply) =>
      sendSendGridError(
        reply,
        codedError(error, { tooLarge: BODY_TOO_LARGE, contentType: 'Content-Type should be application/json.' }, deps.log),
      ),
    );
    authenticateIn(app, async (request) => {
      request.sender = await authenticateKey(deps.keys, request);
    });
    app.addHook('onRequest', permissionHook);
    const error = (description: string) => answer(description, SendGridErrorBody);
    const schema = {
      tags: ['Style S (SendGrid v3)'],
      summary: 'Send mail as SendGrid v3 does (one message per personalization `to` address, all or none)',
      ...compatDoc('`Authorization: Bearer <key>` with a gp_live_ or gp_sandbox_ key'),
      // Validated by parseMail, in SendGrid's words.
      body: documentationOnly(SendGridMail),
      response: {
        202: answer(
          'Every message committed. `X-Message-Id`: the first message id (msg_…); `Gatepost-Message-Ids`: all of them, in order.',
          EmptyBody,
          'text/plain',
        ),
        200: answer('Sandbox mode: every message captured, none delivered.', EmptyBody, 'text/plain'),
        400: error(
          'Invalid, or refused by policy (suppressed recipient, attachments, unknown template): nothing was sent. `field` names the field at fault.',
        ),
        401: error('Missing, unknown or revoked key.'),
        403: error('This key may not send mail (public keys are for the browser SDK).'),
        409: error('A request with this Idempotency-Key is still under way.'),
        413: error('The request or a rendered message is too large.'),
        429: error("Over the tenant's quota; see `Retry-After`."),
      },
    };
    app.post(URL, { config: { access: 'send' }, schema }, async (request, reply) => {
      const sender = request.sender!;
      const mail = parseMail(request.body);
      const items = itemsOf(mail);
      const admitted = await admitAllOrNothing(deps.gate, {
        sender,
        ingress: 'style_s',
        items,
        idempotencyKey: idempotencyKeyHeader(request),
        requestId: request.id,
      }).catch((error: unknown) => {
        throw error instanceof ItemRefused ? inRequestTerms(error, items[error.item]!) : error;
      });
      admittedHeaders(reply, admitted);
      // SendGrid names a request's messages by one id; Gatepost gives the first message's, and
      // every message's in Gatepost-Message-Ids.
      reply.header('X-Message-Id', admitted.responses[0]!.id);
      // SendGrid answers a sandbox-mode send with 200 (validated, not sent), any other with 202.
      return reply.code(sandboxMode(mail) ? 200 : 202).send();
    });
  };

  return { plugin };
}
