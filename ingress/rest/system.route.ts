// GET /healthz and GET /openapi.json.
import { z } from 'zod';
import { answer, type ZodApp } from './schema.http.ts';

export function systemRoutes(app: ZodApp, opts: { ready: () => boolean }): void {
  app.get(
    '/healthz',
    {
      config: { access: 'none' },
      schema: {
        tags: ['System'],
        summary: 'Health: 200 once sends are accepted, 503 while starting or draining',
        response: {
          200: answer('Accepting sends.', z.object({ status: z.literal('ok') })),
          503: answer('Not accepting sends.', z.object({ status: z.literal('unavailable') })),
        },
      },
    },
    async (_request, reply) =>
      opts.ready() ? reply.code(200).send({ status: 'ok' }) : reply.code(503).send({ status: 'unavailable' }),
  );
  let document: unknown = null;
  app.get(
    '/openapi.json',
    {
      config: { access: 'none' },
      schema: {
        tags: ['System'],
        summary: 'This OpenAPI document',
        response: { 200: answer('OpenAPI 3.1.', z.looseObject({ openapi: z.literal('3.1.0') })) },
      },
    },
    // Generated once, from every route's schema, when first asked for.
    async (_request, reply) => reply.code(200).send((document ??= app.swagger())),
  );
}
