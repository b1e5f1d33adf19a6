// `gatepost listen --forward-to`: the built CLI reads a real Gatepost's event feed and POSTs each
// event to a local development server, which verifies it with the SDK's verifyWebhook and the
// secret the CLI printed, as it would verify a real delivery. Nothing needs the development
// server to be reachable from Gatepost.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook, type WebhookEvent } from '../sdk/node/index.ts';
import { eventually, startGatepost, type GatepostProcess } from '../test/harness/gatepost.harness.ts';
import { freePort } from '../test/harness/mx.harness.ts';
import { buildCli, removeCliBuild, startGatepostCli } from './cli.testkit.ts';

let gp: GatepostProcess;
let tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;
let devServer: Server;
let devUrl: string;
const received: Array<{ headers: IncomingHttpHeaders; body: Buffer }> = [];
const running: Array<ReturnType<typeof startGatepostCli>> = [];

beforeAll(async () => {
  buildCli();
  gp = await startGatepost();
  tenant = await gp.tenant();
  devServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
  });
  await new Promise<void>((r) => devServer.listen(0, '127.0.0.1', r));
  devUrl = `http://127.0.0.1:${(devServer.address() as AddressInfo).port}/webhooks`;
}, 180_000);
afterEach(async () => {
  for (const cli of running.splice(0)) {
    cli.child.kill('SIGINT');
    await cli.exited;
  }
});
afterAll(async () => {
  removeCliBuild();
  await gp?.dispose();
  await new Promise((r) => devServer?.close(r));
});

function listen(args: string[], key = tenant.sandbox) {
  const cli = startGatepostCli(['--json', 'listen', ...args], { GATEPOST_URL: gp.url, GATEPOST_API_KEY: key });
  running.push(cli);
  return cli;
}

const send = async (to: string) => {
  const res = await gp.request('POST', '/v1/emails', { key: tenant.sandbox, body: { to, subject: 'Listen', html: '<p>l</p>' } });
  expect(res.status).toBe(202);
  return res.body.id as string;
};

describe('gatepost listen', () => {
  it('forwards each event, signed with the secret it printed, to a server that verifies it with verifyWebhook', async () => {
    const cli = listen(['--forward-to', devUrl]);
    const ready = JSON.parse(await cli.line((l) => l.includes('"ready"')));
    expect(ready).toMatchObject({ ready: true, forward_to: devUrl, secret: expect.stringMatching(/^whsec_/) });

    const id = await send('ann@example.com');
    const forwarded = JSON.parse(await cli.line((l) => l.includes('"event_id"')));
    expect(forwarded).toMatchObject({ type: 'email.sent', status: 204, error: null });

    const delivery = await eventually(() => received.find((r) => r.body.toString().includes(id)));
    const event: WebhookEvent = verifyWebhook({ payload: delivery.body, headers: delivery.headers, secret: ready.secret });
    expect(event).toMatchObject({ id: forwarded.event_id, type: 'email.sent', data: { message_id: id, sandbox: true } });
    expect(delivery.headers['x-service-event']).toBe('email.sent');
    expect(delivery.headers['webhook-id']).toBe(event.id);

    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });

  it('signs with the secret given, and says when the development server cannot be reached', async () => {
    const secret = 'whsec_dGhlIGRldiBzZXJ2ZXIncyBzZWNyZXQ=';
    const cli = listen(['--forward-to', devUrl, '--secret', secret]);
    expect(JSON.parse(await cli.line((l) => l.includes('"ready"'))).secret).toBe(secret);
    const id = await send('bob@example.com');
    const delivery = await eventually(() => received.find((r) => r.body.toString().includes(id)));
    expect(verifyWebhook({ payload: delivery.body, headers: delivery.headers, secret }).data.message_id).toBe(id);

    const down = `http://127.0.0.1:${await freePort()}/webhooks`;
    const toNowhere = listen(['--forward-to', down]);
    await toNowhere.line((l) => l.includes('"ready"'));
    await send('cy@example.com');
    expect(JSON.parse(await toNowhere.line((l) => l.includes('"event_id"')))).toMatchObject({
      status: null,
      error: 'ECONNREFUSED',
    });
  });

  it('refuses a --forward-to that is not an http(s) URL, and a key that may not read the feed', async () => {
    const bad = listen(['--forward-to', 'localhost:8080']);
    expect(await bad.exited).toBe(2);
    expect(bad.out.stderr).toMatch(/^gatepost: .*--forward-to must be an http\(s\) URL/);

    const sending = (await gp.admin('POST', `/tenants/${tenant.id}/keys`, { kind: 'live', scope: 'sending_access' })).body.key;
    const refused = listen(['--forward-to', devUrl], sending);
    expect(await refused.exited).toBe(1);
    expect(JSON.parse(refused.out.stderr)).toMatchObject({ error: { code: 'insufficient_scope', status: 403 } });
  });
});
