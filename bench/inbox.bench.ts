// npm run bench:inbox [-- --captures 100000 --requests 300]
// The hosted capture inbox with a full inbox: fills a fresh Gatepost's catalog with N captures of
// its sandbox key (written into its catalog file through the catalog's own capture writer, as
// the capture path writes them: sending N messages through the pipeline would measure the
// pipeline, which bench:send does), signs in to the inbox, and times its JSON routes over HTTP,
// one request at a time: the first page of the key's inbox and of the tenant's, a page deep in
// by cursor, and three searches (a word in every subject, one recipient, a word in none).
// Goal (issue 24): the first page and a search within 100 ms at the p99.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import type { CapturedMessage } from '../store/catalog.port.ts';
import { call, fmt, gatepostRevision, percentile, startGatepost, table } from './common.ts';

const { values: flags } = parseArgs({
  options: {
    captures: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '300' },
  },
});
const N = Number(flags.captures);
const REQUESTS = Number(flags.requests);
const GOAL_MS = 100;

const gp = await startGatepost();
try {
  const keys = await call(gp.url, 'GET', `/v1/admin/tenants/${gp.tenantId}/keys`, gp.adminToken);
  const keyId = (keys.body.data as { id: string; kind: string }[]).find((k) => k.kind === 'sandbox')!.id;

  const filling = Date.now();
  const catalog = new SqliteCatalog(join(gp.dataDir!, 'catalog.db'));
  for (let from = 0; from < N; from += 1000) {
    const batch: Promise<void>[] = [];
    for (let i = from; i < Math.min(N, from + 1000); i++) batch.push(catalog.putCapture(captureOf(gp.tenantId, keyId, i)));
    await Promise.all(batch);
  }
  await catalog.close();
  console.log(`filled ${fmt(N)} captures in ${fmt((Date.now() - filling) / 1000, 1)} s`);

  const signIn = await fetch(`${gp.url}/inbox/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key: gp.key }),
    redirect: 'manual',
  });
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  const get = async (path: string) => {
    const res = await fetch(gp.url + path, { headers: { cookie } });
    const body = (await res.json()) as { data: unknown[]; next_cursor: string | null };
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };
  // A cursor about half-way down, for the deep page.
  let deep = await get('/inbox/api/messages?limit=200');
  for (let i = 0; i < Math.min(50, N / 400) && deep.next_cursor; i++)
    deep = await get(`/inbox/api/messages?limit=200&cursor=${deep.next_cursor}`);

  const runs: [string, string, string][] = [
    ['first page, the key', '/inbox/api/messages', 'yes'],
    ['first page, the tenant', '/inbox/api/messages?scope=tenant', 'yes'],
    ['a page deep in (cursor)', `/inbox/api/messages?cursor=${deep.next_cursor ?? ''}`, ''],
    ['search: in every subject', '/inbox/api/messages?q=order', 'yes'],
    ['search: one recipient', `/inbox/api/messages?q=user${Math.floor(N / 2)}@`, 'yes'],
    ['search: in none', '/inbox/api/messages?q=zebra', 'yes'],
  ];
  const rows: string[][] = [];
  for (const [name, path, goal] of runs) {
    for (let i = 0; i < 10; i++) await get(path);
    const times: number[] = [];
    let found = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      found = (await get(path)).data.length;
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const p99 = percentile(times, 99);
    rows.push([name, String(found), fmt(percentile(times, 50), 1), fmt(p99, 1), goal ? (p99 <= GOAL_MS ? 'met' : 'MISSED') : '']);
  }
  console.log(`\nbench:inbox, ${fmt(N)} captures, ${REQUESTS} requests each, one at a time (${gatepostRevision()})\n`);
  console.log(table(['request', 'rows', 'p50 ms', 'p99 ms', `p99 <= ${GOAL_MS} ms`], rows));
} finally {
  await gp.stop();
}

/** Capture i: a second apart, to one of N recipients, with a word in every subject. */
function captureOf(tenantId: string, keyId: string, i: number): CapturedMessage {
  const id = `msg_${i.toString(36).padStart(26, '0')}`;
  return {
    message_id: id,
    tenant_id: tenantId,
    key_id: keyId,
    from: 'Shop <shop@sender.example>',
    to: `user${i}@example.com`,
    subject: `Order #${i} has shipped`,
    html: `<p>Hi user ${i}, your order #${i} is on its way.</p><p><a href="https://shop.example/orders/${i}">Track it</a></p>`,
    text: null,
    headers: { 'Message-ID': `<${id}@sender.example>` },
    captured_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    dkim: null,
    source: null,
  };
}
