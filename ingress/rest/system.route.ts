// GET /healthz and GET /openapi.json.
import { z } from 'zod';
import { route, type AnyRoute } from './route.ts';
import { buildOpenApi } from './openapi.ts';
import type { CompatOperation } from '../compat/compat.ingress.ts';

export function systemRoutes(opts: {
  ready: () => boolean;
  routes: () => AnyRoute[];
  compat: CompatOperation[];
  version: string;
}): AnyRoute[] {
  let document: Record<string, unknown> | null = null;
  return [
    route({
      method: 'GET',
      url: '/healthz',
      tag: 'System',
      summary: 'Health: 200 once sends are accepted, 503 while starting or draining',
      access: 'none',
      responses: {
        200: { description: 'Accepting sends.', schema: z.object({ status: z.literal('ok') }) },
        503: { description: 'Not accepting sends.', schema: z.object({ status: z.literal('unavailable') }) },
      },
      handler: async () =>
        opts.ready() ? { status: 200, body: { status: 'ok' } } : { status: 503, body: { status: 'unavailable' } },
    }),
    route({
      method: 'GET',
      url: '/openapi.json',
      tag: 'System',
      summary: 'This OpenAPI document',
      access: 'none',
      responses: { 200: { description: 'OpenAPI 3.1.' } },
      handler: async () => {
        document ??= buildOpenApi(opts.routes(), opts.version, opts.compat);
        return { status: 200, body: document };
      },
    }),
  ];
}
