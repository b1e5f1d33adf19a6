// One attempt over a real socket: it goes to the address the guard checked (a DNS answer that
// changes afterwards is never used), keeps the Host header, never follows a redirect, caps what
// it reads, has a deadline, reads Retry-After, and connects to nothing the guard refuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../runtime/embedded/runtime.sqlite.testkit.ts';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { startReceiver, type Receiver } from '../test/harness/receiver.harness.ts';
import { SsrfGuard } from './ssrf.guard.ts';
import { parseRetryAfter, WebhookPoster } from './webhook.http.ts';

let dns: DnsServer;
let receiver: Receiver;
let poster: WebhookPoster;

beforeAll(async () => {
  dns = await startDns({ 'hooks.test': { A: ['127.0.0.1'] } });
  receiver = await startReceiver();
  poster = new WebhookPoster(new SsrfGuard({ allow: ['127.0.0.0/8'], dnsServers: [dns.address] }));
});
afterAll(async () => {
  poster.close();
  await receiver.close();
  await dns.close();
});

const post = (url: string, timeoutMs = 5000, p = poster) =>
  p.post({ pool: 'whk_test', url, body: '{"id":"evt_1"}', headers: { 'x-service-event': 'email.sent' }, timeoutMs });

describe('WebhookPoster.post', () => {
  it('POSTs the body to the checked address with the Host of the URL', async () => {
    receiver.respond = () => 204;
    const answer = await post(`http://hooks.test:${receiver.port}/in?x=1`);
    expect(answer).toMatchObject({ status: 204, error: null, retryAfterMs: null });
    const got = receiver.received.at(-1)!;
    expect(got.path).toBe('/in?x=1');
    expect(got.headers.host).toBe(`hooks.test:${receiver.port}`);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-service-event']).toBe('email.sent');
    expect(got.body).toBe('{"id":"evt_1"}');
  });

  it('resolves once per attempt and connects to what it checked: a rebound name is refused, not reached', async () => {
    receiver.respond = () => 200;
    let answers = 0;
    // First answer loopback (allowed here), every later one a private address.
    dns.records.set('rebind.test', () => ({ A: [answers++ === 0 ? '127.0.0.1' : '10.9.9.9'] }));
    const before = dns.queries.filter((q) => q === 'rebind.test A').length;
    expect((await post(`http://rebind.test:${receiver.port}/`)).status).toBe(200);
    // One A query for the check; the connection did not ask again (it would have got 10.9.9.9).
    expect(dns.queries.filter((q) => q === 'rebind.test A').length - before).toBe(1);

    const seen = receiver.received.length;
    const connections = receiver.connections;
    const refused = await post(`http://rebind.test:${receiver.port}/`);
    expect(refused.status).toBeNull();
    expect(refused.error).toContain('rebind.test resolves to 10.9.9.9, which is private');
    expect(receiver.received.length).toBe(seen);
    expect(receiver.connections).toBe(connections);
  });

  it('never follows a redirect: a 3xx is the answer', async () => {
    const elsewhere = await startReceiver();
    try {
      receiver.respond = () => ({ status: 302, headers: { location: `${elsewhere.url}/stolen` } });
      expect(await post(`${receiver.url}/`)).toMatchObject({ status: 302, error: 'HTTP 302 Found' });
      expect(elsewhere.connections).toBe(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('gives up at the deadline, and reads at most the cap of a huge body', async () => {
    receiver.respond = () => ({ status: 200, delayMs: 2000 });
    const slow = await post(`${receiver.url}/`, 200);
    expect(slow.status).toBeNull();
    expect(slow.error).toContain('timed out');
    receiver.respond = () => ({ status: 200, body: 'x'.repeat(5 * 1024 * 1024) });
    expect(await post(`${receiver.url}/`)).toMatchObject({ status: 200, error: null });
  });

  it('reads Retry-After of a 429 or 503, in seconds or as a date', async () => {
    receiver.respond = () => ({ status: 429, headers: { 'retry-after': '7' } });
    expect(await post(`${receiver.url}/`)).toMatchObject({ status: 429, retryAfterMs: 7000 });
    receiver.respond = () => ({ status: 500, headers: { 'retry-after': '7' } });
    expect(await post(`${receiver.url}/`)).toMatchObject({ status: 500, retryAfterMs: null });
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('2026-10-21T07:27:00Z'))).toBe(60_000);
    expect(parseRetryAfter('soon')).toBeNull();
  });

  it("gives each pool its own sockets: one endpoint's hung requests hold up no other on the same host", async () => {
    const shared = await startReceiver();
    shared.respond = (d) => (d.path === '/hang' ? { status: 200, delayMs: 60_000 } : 200);
    const p = new WebhookPoster(new SsrfGuard({ allow: ['127.0.0.0/8'] }), { socketsPerDestination: 2 });
    try {
      const hung = Array.from({ length: 4 }, () =>
        p.post({ pool: 'whk_dead', url: `${shared.url}/hang`, body: '{}', headers: {}, timeoutMs: 2_000 }),
      );
      await eventually(() => shared.received.filter((d) => d.path === '/hang').length === 2);
      const live = await p.post({ pool: 'whk_live', url: `${shared.url}/live`, body: '{}', headers: {}, timeoutMs: 5_000 });
      expect(live).toMatchObject({ status: 200 });
      expect((await Promise.all(hung)).map((a) => a.error)).toEqual(Array(4).fill('no answer within 2 s (timed out)'));
    } finally {
      p.close();
      await shared.close();
    }
  });

  it('reports a connection that fails, and connects to nothing the guard refuses', async () => {
    const closed = await startReceiver();
    const port = closed.port;
    await closed.close();
    expect((await post(`http://127.0.0.1:${port}/`)).error).toContain('ECONNREFUSED');

    const strict = new WebhookPoster(new SsrfGuard({ dnsServers: [dns.address] }));
    const connections = receiver.connections;
    for (const url of [
      `http://127.0.0.1:${receiver.port}/`,
      `https://127.0.0.1:${receiver.port}/`,
      `https://hooks.test:${receiver.port}/`,
    ]) {
      const answer = await post(url, 5000, strict);
      expect(answer.status).toBeNull();
      expect(answer.error).toMatch(/refused/);
    }
    expect(receiver.connections).toBe(connections);
    strict.close();
  });
});
