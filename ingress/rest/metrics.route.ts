// GET /metrics: the Prometheus text of this process's counters (ops/metrics.prom.ts), behind
// GATEPOST_METRICS_TOKEN when it is set.
import { z } from 'zod';
import { checkToken } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';

export interface MetricsSource {
  /** The exposition text and its content type. */
  scrape(): Promise<{ text: string; contentType: string }>;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | null;
}

export function metricsRoutes(app: ZodApp, source: MetricsSource): void {
  const { token } = source;
  app.get(
    '/metrics',
    {
      config: { access: 'none' },
      schema: {
        tags: ['System'],
        summary: 'Prometheus metrics of this process (Bearer GATEPOST_METRICS_TOKEN when it is set)',
        response: {
          200: answer(
            'The Prometheus text exposition format.',
            z.string().meta({ example: 'gatepost_sends_total{ingress="api",outcome="accepted"} 1' }),
            'text/plain',
          ),
          401: refusal('GATEPOST_METRICS_TOKEN is set and the request did not send it (missing_api_key, invalid_api_key).'),
        },
      },
    },
    async (request, reply) => {
      if (token) checkToken(token, request, 'metrics');
      const { text, contentType } = await source.scrape();
      return reply.code(200).type(contentType).send(text);
    },
  );
}
