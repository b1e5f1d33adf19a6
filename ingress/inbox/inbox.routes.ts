// GET /inbox: the hosted capture inbox, a web UI over the sandbox captures. Its pages and assets,
// sign-in and sign-out, and the JSON routes its script reads (/inbox/api/*), which take the
// session cookie, never a key: a signed-in sandbox key reads its own inbox or its tenant's.
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { readMessage } from '../../gate/messages.ts';
import { textFromHtml } from '../../mail/content.ts';
import type { Invoker } from '../../runtime/runtime.port.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { KeyRing } from '../../tenancy/keys.ts';
import { senderOf } from '../rest/auth.hooks.ts';
import { answer, refusal, withZod } from '../rest/schema.http.ts';
import { IdParam, pageOf } from '../rest/schemas.ts';
import { CaptureStreams, summaryOf } from './capture.stream.ts';
import { inboxPage, PAGE_POLICY, signInPage } from './inbox.pages.ts';
import { CaptureSummary, Deleted, HtmlQuery, InboxMessage, ListQuery, ScopeQuery, SignIn } from './inbox.schemas.ts';
import { closeSession, noSession, openSession, sessionSender, setSessionCookie } from './inbox.session.ts';
import { capturedHtmlPolicy, framedHtml, hasRemoteContent, linksOf, rawSource } from './message.parts.ts';

export interface InboxDeps {
  catalog: Catalog;
  keys: KeyRing;
  invoker: Invoker;
  /** Emits a tenant's id when this process captures a message of it; absent where no actors are hosted. */
  captures?: EventEmitter;
}

const ASSETS = fileURLToPath(new URL('./assets', import.meta.url));

/** How the OpenAPI document shows the inbox's JSON routes: the session cookie, and what its absence answers. */
const SESSION_DOC = {
  tags: ['Capture inbox'],
  security: [{ inboxSession: [] }],
};
const NO_SESSION = { 401: refusal('Not signed in, or the session ended (expired, signed out, or its key revoked).') };

const html = (reply: FastifyReply, status: number, body: string) =>
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', PAGE_POLICY)
    .header('cache-control', 'no-store')
    .send(body);

export async function inboxRoutes(scope: FastifyInstance, deps: InboxDeps): Promise<void> {
  const { catalog } = deps;
  const streams = new CaptureStreams(catalog, deps.captures);
  scope.addHook('preClose', async () => streams.endAll());
  await scope.register(cookie);
  await scope.register(formbody);
  // Hand-written, small and shipped in the repository: the inbox loads nothing from elsewhere.
  await scope.register(fastifyStatic, { root: ASSETS, prefix: '/inbox/assets/', decorateReply: false });

  const pages = withZod(scope);
  pages.get('/inbox', { schema: { hide: true } }, async (request, reply) => {
    const sender = await sessionSender(catalog, request);
    return html(reply, 200, sender ? inboxPage(sender) : signInPage(null));
  });

  // Failed sign-ins count against the client address, as failed keys do on the API.
  const failures = scope.createRateLimit();
  pages.post('/inbox/session', { schema: { hide: true, body: SignIn } }, async (request, reply) => {
    const seen = await failures(request, { increment: false });
    if (!seen.isAllowed && seen.remaining === 0) {
      const limited = new GatepostError(
        'rate_limited',
        `Too many failed sign-ins from this address; retry in ${seen.ttlInSeconds} s.`,
      );
      return html(reply.header('retry-after', String(seen.ttlInSeconds)), limited.status, signInPage(limited));
    }
    try {
      setSessionCookie(request, reply, await openSession(catalog, deps.keys, request.body.key.trim()));
      return reply.code(303).header('location', '/inbox').send();
    } catch (error) {
      if (!(error instanceof GatepostError)) throw error;
      if (error.code === 'invalid_api_key' || error.code === 'key_not_allowed') await failures(request);
      return html(reply, error.status, signInPage(error));
    }
  });

  pages.post('/inbox/session/end', { schema: { hide: true } }, async (request, reply) => {
    await closeSession(catalog, request, reply);
    return reply.code(303).header('location', '/inbox').send();
  });

  await scope.register(async (signedIn) => {
    signedIn.addHook('onRequest', async (request) => {
      request.sender = await sessionSender(catalog, request);
      if (!request.sender) throw noSession();
    });
    apiRoutes(signedIn, deps, streams);
  });
}

function apiRoutes(scope: FastifyInstance, deps: InboxDeps, streams: CaptureStreams): void {
  const { catalog } = deps;
  const app = withZod(scope);
  /** The captures a scope names: the signed-in key's, or its tenant's. */
  const keyOf = (request: { query: { scope: 'key' | 'tenant' } }, keyId: string) =>
    request.query.scope === 'key' ? keyId : undefined;
  const captureOf = async (tenantId: string, id: string) => {
    const c = await catalog.getCapture(tenantId, id);
    if (!c) throw new GatepostError('not_found', `No captured message ${id}.`);
    return c;
  };

  app.get(
    '/inbox/api/messages',
    {
      schema: {
        ...SESSION_DOC,
        summary: 'List captured messages, newest first, or those a search finds',
        querystring: ListQuery,
        response: { 200: answer('A page of captures.', pageOf(CaptureSummary)), ...NO_SESSION },
      },
    },
    async (request, reply) => {
      const { key, tenant } = senderOf(request);
      const { q, limit, cursor } = request.query;
      const page = await catalog.listCaptures(tenant.id, { limit, cursor, search: q, key_id: keyOf(request, key.id) });
      return reply.code(200).send({ data: page.data.map(summaryOf), next_cursor: page.next_cursor });
    },
  );

  app.get(
    '/inbox/api/messages/:id',
    {
      schema: {
        ...SESSION_DOC,
        summary: 'One captured message: its parts, headers, links and timeline',
        params: IdParam,
        response: {
          200: answer('The captured message.', InboxMessage),
          404: refusal('Not captured in this tenant.'),
          ...NO_SESSION,
        },
      },
    },
    async (request, reply) => {
      const { key, tenant } = senderOf(request);
      const c = await captureOf(tenant.id, request.params.id);
      // The timeline is the message actor's; a message whose retention ended has none left.
      const read = await readMessage(deps, key, c.message_id).catch((error: unknown) => {
        if (error instanceof GatepostError && error.code === 'not_found') return null;
        throw error;
      });
      const base = `/inbox/api/messages/${encodeURIComponent(c.message_id)}`;
      return reply.code(200).send({
        ...summaryOf(c),
        text: c.text ?? textFromHtml(c.html),
        headers: Object.entries(c.headers).map(([name, value]) => ({ name, value })),
        links: linksOf(c.html),
        remote_content: hasRemoteContent(c.html),
        html_url: `${base}/html`,
        raw_url: `${base}/raw`,
        dkim: c.dkim,
        status: read?.record.status ?? null,
        events: read?.events ?? [],
      });
    },
  );

  app.get(
    '/inbox/api/messages/:id/html',
    { schema: { hide: true, params: IdParam, querystring: HtmlQuery } },
    async (request, reply) => {
      const c = await captureOf(senderOf(request).tenant.id, request.params.id);
      return reply
        .code(200)
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', capturedHtmlPolicy(request.query.images === 'remote'))
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-store')
        .send(framedHtml(c.html));
    },
  );

  app.get('/inbox/api/messages/:id/raw', { schema: { hide: true, params: IdParam } }, async (request, reply) => {
    const c = await captureOf(senderOf(request).tenant.id, request.params.id);
    return reply
      .code(200)
      .header('content-type', 'message/rfc822')
      .header('content-disposition', `attachment; filename="${c.message_id}.eml"`)
      .header('cache-control', 'no-store')
      .send(await rawSource(c));
  });

  app.delete(
    '/inbox/api/messages/:id',
    {
      schema: {
        ...SESSION_DOC,
        summary: 'Delete one captured message',
        params: IdParam,
        response: { 204: answer('Deleted.'), 404: refusal('Not captured in this tenant.'), ...NO_SESSION },
      },
    },
    async (request, reply) => {
      const deleted = await catalog.deleteCapture(senderOf(request).tenant.id, request.params.id);
      if (!deleted) throw new GatepostError('not_found', `No captured message ${request.params.id}.`);
      return reply.code(204).send();
    },
  );

  app.delete(
    '/inbox/api/messages',
    {
      schema: {
        ...SESSION_DOC,
        summary: "Delete every captured message of the key's inbox, or of its tenant's",
        querystring: ScopeQuery,
        response: { 200: answer('How many were deleted.', Deleted), ...NO_SESSION },
      },
    },
    async (request, reply) => {
      const { key, tenant } = senderOf(request);
      return reply.code(200).send({ deleted: await catalog.deleteCaptures(tenant.id, keyOf(request, key.id)) });
    },
  );

  // No HEAD twin: a stream has no headers-only answer, and would stay open.
  app.get(
    '/inbox/api/stream',
    { exposeHeadRoute: false, schema: { hide: true, querystring: ScopeQuery } },
    async (request, reply) => {
      const { key, tenant } = senderOf(request);
      reply.hijack();
      const signedIn = async () => (await sessionSender(catalog, request))?.key.id === key.id;
      await streams
        .serve(reply.raw, { tenantId: tenant.id, keyId: keyOf(request, key.id), signedIn })
        .catch(() => reply.raw.destroy());
    },
  );
}
