// The docs, served by Gatepost itself: every page of docs/ at /docs/<page> (HTML, with a
// navigation) and /docs/<page>.md (the markdown), the images beside them, the API reference at
// /docs/api/ (Scalar's, its script served from here: nothing comes from another host), and the
// text indexes /llms.txt and /llms-full.txt. Open to anyone, like the OpenAPI document; kept out
// of that document (`hide`), being pages rather than API.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { layout } from './docs.html.ts';
import { llmsFullTxt, llmsTxt } from './docs.llms.ts';
import type { Docs } from './docs.pages.ts';

const HIDDEN = { schema: { hide: true } } as const;

interface Answer {
  contentType: string;
  body: string | Buffer;
}

/** Everything under /docs/ by its file name (`errors`, `errors.md`, `flow.png`), made once. */
function answers(docs: Docs): Map<string, Answer> {
  const files = new Map<string, Answer>();
  for (const page of docs.pages) {
    files.set(page.slug, { contentType: 'text/html; charset=utf-8', body: layout(docs.pages, page) });
    files.set(`${page.slug}.md`, { contentType: 'text/markdown; charset=utf-8', body: page.markdown });
  }
  for (const image of docs.images) files.set(image.name, { contentType: image.contentType, body: image.bytes });
  return files;
}

export async function docsPlugin(app: FastifyInstance, { docs }: { docs: Docs }): Promise<void> {
  const files = answers(docs);
  const send = (reply: FastifyReply, file: string) => {
    const found = files.get(file);
    if (!found) throw new GatepostError('not_found', `No page /docs/${file}.`);
    return reply.type(found.contentType).send(found.body);
  };
  const text = (body: string): Answer => ({ contentType: 'text/plain; charset=utf-8', body });
  const llms = text(llmsTxt(docs.pages));
  const llmsFull = text(llmsFullTxt(docs.pages));

  // The index at /docs/, so that its relative links (`errors`) resolve inside /docs/.
  app.get('/docs', HIDDEN, (_request, reply) => reply.redirect('/docs/', 301));
  app.get('/docs/', HIDDEN, (_request, reply) => send(reply, 'index'));
  app.get<{ Params: { file: string } }>('/docs/:file', HIDDEN, (request, reply) => send(reply, request.params.file));
  app.get('/llms.txt', HIDDEN, (_request, reply) => reply.type(llms.contentType).send(llms.body));
  app.get('/llms-full.txt', HIDDEN, (_request, reply) => reply.type(llmsFull.contentType).send(llmsFull.body));

  const reference = apiReference();
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const answer = await (await reference()).inject({ method: 'GET', url: request.url });
    if (answer.statusCode === 404) throw new GatepostError('not_found', `No page ${request.url.split('?')[0]}.`);
    for (const name of ['content-type', 'location'] as const) {
      const value = answer.headers[name];
      if (value !== undefined) reply.header(name, value);
    }
    return reply.code(answer.statusCode).send(answer.rawPayload);
  };
  app.get('/docs/api', HIDDEN, forward);
  app.get('/docs/api/*', HIDDEN, forward);
}

/**
 * The API reference, Scalar's Fastify plugin in a Fastify of its own, made on the first request
 * for it, which the routes above hand every such request to (`inject`). Loaded at start, the
 * plugin cost every process 20 MiB of heap and 34 MiB resident whether or not anyone opened
 * /docs/api/ (its 4.4 MB of source, which V8 keeps as text, and the browser bundle it serves;
 * measured by importing it alone, bench/RESULTS.md thirty-fifth pass), an actor host on Dapr too.
 */
function apiReference(): () => Promise<FastifyInstance> {
  let made: Promise<FastifyInstance> | null = null;
  const make = async () => {
    const { default: plugin } = await import('@scalar/fastify-api-reference');
    const app = Fastify({ logger: false });
    await app.register(plugin, {
      routePrefix: '/docs/api',
      configuration: {
        url: '/openapi.json',
        pageTitle: 'Gatepost API reference',
        // Offline: no web fonts, telemetry, AI agent or MCP helpers, each of which calls Scalar's servers.
        withDefaultFonts: false,
        telemetry: false,
        agent: { disabled: true },
        mcp: { disabled: true },
        showDeveloperTools: 'never',
      },
    });
    await app.ready();
    return app;
  };
  return () =>
    (made ??= make().catch((error: unknown) => {
      made = null;
      throw error;
    }));
}
