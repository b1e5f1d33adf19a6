// The client's retries, timeouts and malformed answers, against a tiny local HTTP server that
// answers what each test scripts: a 429 with Retry-After, 5xx, a stall, a page that is not JSON.
// (client.test.ts talks to a real Gatepost.)
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Gatepost, GatepostError } from './index.ts';
import { gatepostErrorOf } from '../../test/harness/sdk.harness.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

let server: Server | null = null;

/** A server answering the nth request with answers[n] (the last one again after that); answers the client and what it saw. */
async function scripted(answers: Array<(res: ServerResponse) => void>) {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    req.resume();
    answers[Math.min(seen.length - 1, answers.length - 1)]!(res);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const client = new Gatepost({ apiKey: 'gp_sandbox_test', baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2_000 });
  return { client, seen };
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = null;
});

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const refused = (code: string, status: number, headers: Record<string, string> = {}) =>
  json(status, { error: { code, message: `${code} here` } }, headers);
const accepted = json(202, {
  id: 'msg_1',
  status: 'queued',
  to: 'a@example.com',
  created_at: 'now',
  send_at: null,
  sandbox: true,
});

const mail = { to: 'a@example.com', subject: 's', html: 'h' };

describe('retries', () => {
  it('sends again after a 429, as Retry-After asks, with the same idempotency key', async () => {
    const { client, seen } = await scripted([refused('rate_limited', 429, { 'retry-after': '1' }), accepted]);
    expect((await client.send(mail)).id).toBe('msg_1');
    expect(seen).toHaveLength(2);
    const keys = seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(seen[0]!.headers.authorization).toBe('Bearer gp_sandbox_test');
  });

  it('gives a new key to each call, and the caller’s own when given', async () => {
    const { client, seen } = await scripted([accepted]);
    await client.send(mail);
    await client.send(mail);
    await client.send({ ...mail, idempotency_key: 'mine' });
    expect(new Set(seen.map((s) => s.headers['idempotency-key'])).size).toBe(3);
    expect(seen[2]!.headers['idempotency-key']).toBe('mine');
  });

  it('retries a 5xx of a read or a send, a bounded number of times, then throws the last error', async () => {
    const { client, seen } = await scripted([refused('storage_unavailable', 503)]);
    expect(await gatepostErrorOf(client.messages.get('msg_1', { maxRetries: 2 }))).toMatchObject({
      code: 'storage_unavailable',
      status: 503,
    });
    expect(seen).toHaveLength(3);
    const after = await scripted([refused('internal_error', 500), accepted]);
    expect((await after.client.send(mail)).id).toBe('msg_1');
    expect(after.seen).toHaveLength(2);
  });

  it('does not repeat a create that may have happened after a 5xx', async () => {
    const { client, seen } = await scripted([refused('internal_error', 500)]);
    expect(await gatepostErrorOf(client.webhooks.create({ url: 'https://h.example/x', events: ['email.sent'] }))).toMatchObject({
      code: 'internal_error',
    });
    expect(seen).toHaveLength(1);
  });

  it('throws at once a 429 that asks for a longer wait than the client waits, with its Retry-After', async () => {
    const { client, seen } = await scripted([refused('quota_exceeded', 429, { 'retry-after': '3600' })]);
    expect(await gatepostErrorOf(client.send(mail))).toMatchObject({ code: 'quota_exceeded', status: 429, retryAfter: 3600 });
    expect(seen).toHaveLength(1);
  });

  it('does not retry a 4xx other than 429', async () => {
    const { client, seen } = await scripted([refused('invalid_api_key', 401)]);
    expect(await gatepostErrorOf(client.send(mail))).toMatchObject({ code: 'invalid_api_key', status: 401 });
    expect(seen).toHaveLength(1);
  });
});

describe('no answer, or not an answer of Gatepost', () => {
  it('times out a call that gets no answer, after its retries', async () => {
    const { client, seen } = await scripted([() => {}]);
    expect(await gatepostErrorOf(client.messages.get('msg_1', { timeoutMs: 300, maxRetries: 1 }))).toMatchObject({
      code: 'timeout',
      status: null,
    });
    expect(seen).toHaveLength(2);
  });

  it('throws connection_error when nothing listens', async () => {
    await scripted([accepted]);
    const port = (server!.address() as AddressInfo).port;
    server!.close();
    const down = new Gatepost({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 });
    expect(await gatepostErrorOf(down.messages.get('msg_1'))).toMatchObject({ code: 'connection_error', status: null });
  });

  it('throws unexpected_response for an answer that is not JSON, or an error without a code', async () => {
    const { client } = await scripted([(res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>')]);
    expect(await gatepostErrorOf(client.messages.get('msg_1'))).toMatchObject({ code: 'unexpected_response', status: 200 });
    const proxy = await scripted([(res) => res.writeHead(404).end('Not Found')]);
    expect(await gatepostErrorOf(proxy.client.messages.get('msg_1'))).toMatchObject({ code: 'unexpected_response', status: 404 });
  });

  it('ends a call its signal aborts', async () => {
    const { client } = await scripted([() => {}]);
    const stop = new AbortController();
    const call = client.messages.get('msg_1', { signal: stop.signal });
    stop.abort();
    expect(await gatepostErrorOf(call)).toMatchObject({ code: 'aborted' });
  });
});
