// The links in sent mail (issue 24), on Gatepost's own HTTP port under GATEPOST_PUBLIC_URL:
// GET /t/o/<token> (the open pixel), GET /t/c/<token> (a tracked link: 302 to where it pointed)
// and /u/<token> (GET: a page asking to confirm; POST: unsubscribes at once, RFC 8058's
// one-click, which mail providers send). The people who reach them are a message's recipients,
// in a browser or a mail client, not API clients: answers are pages and images, never JSON, and
// the routes are hidden from the OpenAPI document (docs/tracking.md describes them). The pixel
// and the redirect answer before their event is recorded (gate/tracking.ts); an unsubscribe
// answers once it is.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Hit, Tracking } from '../../gate/tracking.ts';
import { CLICK_PATH, readToken } from '../../mail/tracking.token.ts';
import { answer, type ZodApp } from './schema.http.ts';

/** A transparent 1×1 GIF: the smallest image every mail client shows. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** How much of a one-click POST's body is read (it says only `List-Unsubscribe=One-Click`). */
const UNSUBSCRIBE_BODY_LIMIT = 16 * 1024;

const TokenParam = z.object({ token: z.string() });
const WildcardParam = z.object({ '*': z.string() });

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;

const html = (description: string) => answer(description, z.string(), 'text/html');

function notFound(reply: FastifyReply) {
  return reply
    .code(404)
    .type('text/html; charset=utf-8')
    .send(page('Link not found', '<p>This link is not valid, or has expired.</p>'));
}

const client = (request: FastifyRequest): Pick<Hit, 'user_agent' | 'ip'> => ({
  user_agent: request.headers['user-agent'] ?? null,
  ip: request.ip,
});

export function trackingRoutes(app: ZodApp, tracking: Tracking): void {
  const hit = (request: FastifyRequest, kind: Hit['kind'], token: string) => tracking.hit({ kind, token, ...client(request) });

  // A one-click POST comes as a form (RFC 8058 §3.2); its body says nothing the token does not.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: UNSUBSCRIBE_BODY_LIMIT }, (_request, _body, done) =>
    done(null, null),
  );

  app.get(
    '/t/o/:token',
    {
      config: { access: 'none' },
      schema: {
        hide: true,
        tags: ['Tracking'],
        summary: 'Open pixel: records email.opened; always answers the image',
        params: TokenParam,
        response: { 200: answer('A 1×1 transparent GIF, whatever the token.', z.string(), 'image/gif') },
      },
    },
    async (request, reply) => {
      // The image whatever happens: a broken image in a reader's mail helps nobody.
      await hit(request, 'open', request.params.token).catch(() => undefined);
      return reply.code(200).header('cache-control', 'no-store, private').type('image/gif').send(PIXEL);
    },
  );

  app.get(
    `${CLICK_PATH}*`,
    {
      config: { access: 'none' },
      schema: {
        hide: true,
        tags: ['Tracking'],
        summary: 'Tracked link: records email.clicked and redirects to the link',
        params: WildcardParam,
        response: {
          302: answer('To the link the message held (`Location`).'),
          404: html('A token that is not signed for its message (tampered, or unknown): a plain page, no redirect.'),
        },
      },
    },
    async (request, reply) => {
      const outcome = await hit(request, 'click', request.params['*']);
      if (outcome.result === 'refused') return notFound(reply);
      return reply.code(302).header('cache-control', 'no-store, private').redirect(outcome.url);
    },
  );

  app.get(
    '/u/:token',
    {
      config: { access: 'none' },
      schema: {
        hide: true,
        tags: ['Tracking'],
        summary: 'Unsubscribe page: asks the recipient to confirm',
        params: TokenParam,
        response: {
          200: html('A page with one button, which posts to this URL.'),
          404: html('Not an unsubscribe token.'),
        },
      },
    },
    async (request, reply) => {
      // A GET changes nothing: link scanners and prefetchers follow links (RFC 8058 §1).
      if (!readToken('unsubscribe', request.params.token)) return notFound(reply);
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .send(
          page(
            'Unsubscribe',
            '<p>Stop receiving these emails?</p><form method="post" action="?via=page"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>',
          ),
        );
    },
  );

  app.post(
    '/u/:token',
    {
      config: { access: 'none' },
      schema: {
        hide: true,
        tags: ['Tracking'],
        summary: 'One-click unsubscribe (RFC 8058): records email.unsubscribed and suppresses the recipient',
        params: TokenParam,
        querystring: z.object({
          via: z
            .literal('page')
            .optional()
            .meta({ description: "Set by the confirmation page's form; absent on a provider's one-click POST." }),
        }),
        response: {
          200: html('Unsubscribed (also when it was already).'),
          404: html('A token that is not signed for its message.'),
        },
      },
    },
    async (request, reply) => {
      const outcome = await tracking.unsubscribe(request.params.token, {
        ...client(request),
        via: request.query.via ?? 'one_click',
      });
      if (outcome.result === 'refused') return notFound(reply);
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .send(page('Unsubscribed', '<p>You will receive no more of these emails.</p>'));
    },
  );
}
