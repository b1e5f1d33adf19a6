// Secrets at rest (issue 20, item 8): with GATEPOST_ENCRYPTION_KEY set, a webhook secret signs
// deliveries as before, is nowhere in the stored row, and still works after the key rotates; the
// data directory and its files are the owner's alone.
import { createHmac, randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  startGatepost,
  tempDir,
  TEST_RUNTIME,
  type EmbeddedProcess,
  type GatepostProcess,
} from '../harness/gatepost.harness.ts';
import { startReceiver, type Receiver } from '../harness/receiver.harness.ts';

const FIRST_KEY = randomBytes(32).toString('base64');
const SECOND_KEY = randomBytes(32).toString('hex');

let receiver: Receiver;
let gp: GatepostProcess;

beforeAll(async () => {
  receiver = await startReceiver();
  // A data directory Gatepost creates itself, as on a first start.
  gp = await startGatepost({
    dataDir: join(tempDir(), 'data'),
    env: { GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8,::1', GATEPOST_ENCRYPTION_KEY: FIRST_KEY },
  });
});
afterAll(async () => {
  await gp?.dispose();
  await receiver?.close();
});

/** Sends a test event to the endpoint and checks its signature with `secret`, as a receiver does. */
async function signedWith(key: string, id: string, secret: string): Promise<void> {
  const sent = await gp.request('POST', `/v1/webhooks/${id}/test`, { key });
  expect(sent.status).toBe(202);
  const d = await eventually(() => receiver.byEvent(sent.body.event.id)[0]);
  const t = /t=(\d+)/.exec(String(d.headers['x-service-signature']))?.[1];
  const expected = createHmac('sha256', secret).update(`${t}.${d.body}`).digest('hex');
  expect(String(d.headers['x-service-signature'])).toContain(`v1=${expected}`);
}

describe('secrets at rest', () => {
  it('signs with a sealed secret, stores none of it, and reads it after the key rotates', async () => {
    const t = await gp.tenant();
    const created = await gp.request('POST', '/v1/webhooks', {
      key: t.live,
      body: { url: `${receiver.url}/hook`, events: ['email.sent'] },
    });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as { id: string; secret: string };
    await signedWith(t.live, id, secret);
    const rows = (await gp.catalogRows('webhooks')) as { id: string; secret: string }[];
    const row = rows.find((r) => r.id === id)!;
    expect(row.secret).toMatch(/^sealed:v1:/);
    expect(JSON.stringify(row)).not.toContain(secret.slice('whsec_'.length));

    gp.setEnv({ GATEPOST_ENCRYPTION_KEY: SECOND_KEY, GATEPOST_ENCRYPTION_KEYS_OLD: FIRST_KEY });
    await gp.restart();
    await signedWith(t.live, id, secret);
  });

  it.skipIf(TEST_RUNTIME === 'dapr')('keeps the data directory 0700 and its files 0600', () => {
    const dir = (gp as EmbeddedProcess).dataDir;
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    expect(mode(dir)).toBe('700');
    const files = readdirSync(dir).filter((f) => f.endsWith('.db') || f.endsWith('-wal') || f.endsWith('-shm'));
    expect(files).toEqual(expect.arrayContaining(['catalog.db', 'actors.db']));
    for (const f of files) expect(mode(join(dir, f)), f).toBe('600');
    expect(mode(join(dir, 'smtp-tls'))).toBe('700');
    expect(mode(join(dir, 'smtp-tls', 'key.pem'))).toBe('600');
  });
});
