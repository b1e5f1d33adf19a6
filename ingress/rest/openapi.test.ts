// The OpenAPI document covers every route the server serves, and nothing it does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type TestApp } from '../../test/harness/app.harness.ts';
import { openApiPath } from './openapi.ts';
import type { RestServer } from './server.ts';

let app: TestApp;
let server: RestServer;

beforeAll(async () => {
  app = await buildApp('openapi', { deps: { adminToken: 'token' } });
  server = app.server;
});
afterAll(() => app.close());

describe('GET /openapi.json', () => {
  it('lists every route the server serves, and only those', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const served = server.served.map((r) => `${r.method} ${openApiPath(r.url)}`);
    expect(served.length).toBeGreaterThan(20);
    expect(new Set(documented)).toEqual(new Set(served));
  });

  it('gives every answer with a body a schema (only 204s and the document itself have none)', async () => {
    const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const bare = Object.entries(
      doc.paths as Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>,
    ).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) =>
        Object.entries(op.responses)
          .filter(([status, r]) => status !== '204' && !r.content)
          .map(([status]) => `${method.toUpperCase()} ${path} ${status}`),
      ),
    );
    expect(bare).toEqual(['GET /openapi.json 200']);
  });

  it('describes request bodies and responses from the validating schemas', async () => {
    const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const send = doc.paths['/v1/emails'].post;
    const body = send.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties)).toEqual(
      expect.arrayContaining([
        'from',
        'to',
        'subject',
        'html',
        'text',
        'template',
        'data',
        'idempotency_key',
        'send_at',
        'stream',
      ]),
    );
    expect(body.additionalProperties).toBe(false);
    expect(Object.keys(send.responses).sort()).toEqual(['202', '400', '401', '403', '413', '422', '429']);
    expect(send.responses['422'].content['application/json'].schema.properties.error.properties.code.enum).toContain(
      'recipient_suppressed',
    );
    const batch = doc.paths['/v1/emails/batch'].post.requestBody.content['application/json'].schema;
    expect(batch).toMatchObject({ type: 'array', maxItems: 500 });
    expect(batch.items.properties.to).toBeDefined();
    // Every keyed route documents its permission's refusal, every authenticated one its 401 and 429.
    expect(doc.paths['/v1/templates/{slug}'].patch.responses['403'].description).toContain('`manage`');
    expect(
      doc.paths['/v1/templates/{slug}'].patch.responses['403'].content['application/json'].schema.properties.error.properties.code
        .enum,
    ).toContain('insufficient_scope');
    expect(Object.keys(doc.paths['/v1/admin/tenants'].get.responses)).toEqual(expect.arrayContaining(['401', '429']));
    expect(doc.paths['/v1/messages/{id}'].get.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    ]);
  });
});
