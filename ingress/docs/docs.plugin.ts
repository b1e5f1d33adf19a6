// The docs, served by Gatepost itself: every page of docs/ at /docs/<page> (HTML, with a
// navigation) and /docs/<page>.md (the markdown), the images beside them, the API reference at
// /docs/api/ (Scalar's, its script served from here: nothing comes from another host), and the
// text indexes /llms.txt and /llms-full.txt. Open to anyone, like the OpenAPI document; kept out
// of that document (`hide`), being pages rather than API.
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance, FastifyReply } from 'fastify';
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

  await app.register(apiReference, {
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
}
