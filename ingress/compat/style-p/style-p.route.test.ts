// A Style P batch whose admission fails part-way (the store fails on one of its messages): the
// request answers 500 with ErrorCode 100 and nothing of it exists; the retry with the same
// Idempotency-Key admits every message, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Invoker } from '../../../runtime/runtime.port.ts';
import { derivedId } from '../../../lib/ids.ts';
import { createTenant } from '../../../tenancy/tenants.ts';
import { buildApp, type TestApp } from '../../../test/harness/app.harness.ts';
import type { RestServer } from '../../rest/server.ts';

let app: TestApp;
let server: RestServer;
let tenantId: string;
let live: string;
/** The admission (counted from 0) at which the store fails; null: it does not. */
let failAt: number | null = null;
const logged: string[] = [];

beforeAll(async () => {
  let admits = 0;
  app = await buildApp('style-p', {
    actors: true,
    // As with a relay: live mail from any domain, the sender rule being another test's subject.
    relay: true,
    gateInvoker: (runtime): Invoker => ({
      invoke: (type, id, method, args) =>
        method === 'admit' && failAt !== null && admits++ === failAt
          ? Promise.reject(new Error('state store unavailable'))
          : runtime.invoke(type, id, method, args),
    }),
    deps: { log: (message, error) => logged.push(`${message}: ${String(error)}`) },
  });
  server = app.server;
  tenantId = (await createTenant(app.catalog, { name: 't', default_from: 'shop@sender.example' })).id;
  live = (await app.keys.issue(tenantId, 'live', null)).secret;
});
afterAll(() => app.close());

describe('a Style P batch that fails part-way', () => {
  it('rolls back every message, answers 500 with ErrorCode 100, and its retry sends each once', async () => {
    const messages = Array.from({ length: 6 }, (_, i) => ({ To: `r${i}@example.com`, Subject: `s${i}`, HtmlBody: '<p>h</p>' }));
    const send = () =>
      server.app.inject({
        method: 'POST',
        url: '/email/batch',
        headers: { 'x-postmark-server-token': live, 'idempotency-key': 'k' },
        payload: messages,
      });
    const ids = messages.map((_, i) => derivedId('msg', tenantId, 'live', `k:${i}:0`));
    const exists = async (id: string) =>
      (await server.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: { authorization: `Bearer ${live}` } }))
        .statusCode === 200;

    failAt = 3;
    const failed = await send();
    expect(failed.statusCode).toBe(500);
    expect(failed.json()).toEqual({ ErrorCode: 100, Message: 'Something went wrong on our side.' });
    expect(logged.join('\n')).toContain('state store unavailable');
    for (const id of ids) expect(await exists(id)).toBe(false);

    failAt = null;
    const retried = await send();
    expect(retried.statusCode).toBe(200);
    expect(retried.json().map((r: { ErrorCode: number; MessageID: string }) => [r.ErrorCode, r.MessageID])).toEqual(
      ids.map((id) => [0, id]),
    );
    for (const id of ids) expect(await exists(id)).toBe(true);
  });
});
