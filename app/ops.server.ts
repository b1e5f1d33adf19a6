// What an actor host (GATEPOST_ROLE=actors on Dapr) serves on PORT: GET /metrics, its own
// counters (deliveries, webhooks), as the HTTP API process serves its own (sends, refusals).
import Fastify, { type FastifyInstance } from 'fastify';
import { codedError, sendError } from '../ingress/rest/errors.http.ts';
import { metricsRoutes, type MetricsSource } from '../ingress/rest/metrics.route.ts';
import { serializerCompiler, validatorCompiler, withZod } from '../ingress/rest/schema.http.ts';
import { GatepostError } from '../errors/errors.catalog.ts';

/** With no source (GATEPOST_METRICS=false) it answers 404 to everything, as the API process does to GET /metrics. */
export function opsServer(source: MetricsSource | null, log: (message: string, error?: unknown) => void): FastifyInstance {
  const app = Fastify({ logger: false });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  if (source) metricsRoutes(withZod(app), source);
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new GatepostError(
        'not_found',
        `No route ${request.method} ${request.url.split('?')[0]}: an actor host serves GET /metrics only.`,
      ),
    ),
  );
  app.setErrorHandler((error, _request, reply) =>
    sendError(reply, codedError(error, { tooLarge: 'A scrape has no body.', contentType: 'A scrape has no body.' }, log)),
  );
  return app;
}
