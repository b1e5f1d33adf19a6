// The JSON bodies of every HTTP ingress, parsed by Fastify's own parser (prototype poisoning
// refused as before), with one refusal more: a NUL (U+0000) in any string or key. PostgreSQL's
// text and jsonb refuse a NUL outright, so on the Dapr runtime such a body was a 500 (the fuzz
// suite sent a tenant's name of "\u0000"); no field of Gatepost's means anything with one. Only a
// body whose text holds the escape `\u0000` is walked.
import type { FastifyInstance } from 'fastify';
import { GatepostError } from '../../errors/errors.catalog.ts';

function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([key, v]) => key.includes('\0') || holdsNul(v));
  }
  return false;
}

export function refuseNulInJson(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    parse(request, body as string, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      if ((body as string).includes('\\u0000') && holdsNul(value)) {
        return done(new GatepostError('invalid_request', 'The body holds a NUL character (\\u0000).'), undefined);
      }
      done(null, value);
    }),
  );
}
