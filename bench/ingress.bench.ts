// npm run bench:ingress [-- --messages 10000 --warmup 1000 --connections 20 --rounds 3 --tls]
//   [--gatepost-only] [--profile DIR]
// Accepted messages per second through each way in, on the same machine in the same run:
// - SMTP submission: `connections` persistent SMTP connections, each sending 1 KB messages (one
//   recipient each, a Message-ID each) one after another until `messages` are accepted; against
//   Gatepost (sandbox key) and, under the same load, Debian's Postfix, which like Gatepost makes
//   a message durable (its queue file, fsync) before its 250 and here only accepts and queues
//   (default_transport = discard); the two take turns, `rounds` times; with --tls both also
//   over STARTTLS;
// - POST /v1/emails/batch, 500 messages a request, 4 requests in flight;
// - POST /v1/emails, one message a request, on `connections` keep-alive connections.
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { generate } from 'selfsigned';
import {
  call,
  capturedUntil,
  cpuSince,
  cpuSnapshot,
  fmt,
  gatepostRevision,
  median,
  profileArgs,
  sendBody,
  sleep,
  startGatepost,
  waitForQuiet,
  type BenchGatepost,
} from './common.ts';
import { startPostfix } from './postfix.ts';
import { emptyLoad, rateOf, rowsTable, smtpLoad, type Load, type Mail, type Row, type SmtpTarget } from './smtp.load.ts';

const { values: flags } = parseArgs({
  options: {
    messages: { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '20' },
    /** Also measure both SMTP servers over STARTTLS. */
    tls: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    /** Only Gatepost's SMTP submission rows: no Postfix, no HTTP rows (for a quick comparison of commits). */
    'gatepost-only': { type: 'boolean', default: false },
    /** Write a CPU profile of each Gatepost (node --cpu-prof) into this directory. */
    profile: { type: 'string' },
  },
});
const MESSAGES = Number(flags.messages);
const WARMUP = Number(flags.warmup);
const CONNECTIONS = Number(flags.connections);
const ROUNDS = Number(flags.rounds);
/** Each measurement waits up to this long for the rest of the machine to fall quiet. */
const QUIET_WAIT_MS = 180_000;
const BATCH = 500;
const RUN = Date.now().toString(36);

// ---- the SMTP load ---------------------------------------------------------------------------

// A plain-text body that brings each message to about 1 KB with its headers.
const FILLER = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the shipping notice: your parcel is on its way.`)
  .join('\r\n')
  .slice(0, 760);

function message(n: number): Buffer {
  return Buffer.from(
    `From: Shop <shop@sender.example>\r\nTo: user${n}@example.com\r\nSubject: Order ${n} has shipped\r\n` +
      `Message-ID: <${n}.${RUN}@sender.example>\r\nDate: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\n` +
      `Content-Type: text/plain; charset=us-ascii\r\n\r\n${FILLER}\r\n`,
  );
}

/** Message n to user n, from the shop. */
const mail: Mail = (n) => ({ from: 'shop@sender.example', to: `user${n}@example.com`, raw: message(n) });

/** A warm-up, then the measured part; `pids` are the processes that serve (for the CPU columns). */
async function measure(
  name: string,
  how: string,
  pids: () => number[],
  load: (first: number, count: number) => Promise<Load>,
): Promise<Row & { receipts: string[] }> {
  const busy = await waitForQuiet(15, QUIET_WAIT_MS);
  console.log(`${name}: ${WARMUP} of warm-up, then ${MESSAGES} messages, ${how} (machine ${fmt(busy)}% busy before)`);
  const warm = await load(0, WARMUP);
  const cpu = cpuSnapshot(pids());
  const started = performance.now();
  const run = await load(WARMUP, MESSAGES);
  const seconds = (performance.now() - started) / 1000;
  return {
    name,
    accepted: run.accepted,
    seconds,
    refused: warm.refused + run.refused,
    latencies: run.latencies.sort((a, b) => a - b),
    cpu: cpuSince(cpu),
    // The warm-up's errors count; its other notes (its latencies) do not.
    notes: [...new Set([...warm.notes.filter((n) => n.startsWith('error:')), ...run.notes])].slice(0, 3),
    receipts: [...warm.receipts, ...run.receipts],
  };
}

const measureSmtp = (target: SmtpTarget) =>
  measure(target.name, `${CONNECTIONS} SMTP connections`, target.pids, (first, count) =>
    smtpLoad(target, mail, CONNECTIONS, first, count),
  );

// ---- Postfix ---------------------------------------------------------------------------------

async function postfixRow(tls: { cert: string; key: string } | null): Promise<Row> {
  const postfix = await startPostfix({ tls });
  try {
    const name = `Postfix ${postfix.version}${tls ? ' (STARTTLS)' : ''}`;
    const row = await measureSmtp({ name, port: postfix.port, ca: tls?.cert ?? null, auth: null, pids: postfix.pids });
    const queued = row.receipts.filter((r) => /^250 2\.0\.0 Ok: queued as /.test(r)).length;
    const started = Date.now();
    while (postfix.sent() < queued && Date.now() - started < 120_000) await sleep(500);
    row.notes.push(`250 "queued" answers: ${fmt(queued)}; taken from the queue (discarded) by then: ${fmt(postfix.sent())}`);
    return row;
  } finally {
    postfix.stop();
  }
}

// ---- Gatepost --------------------------------------------------------------------------------

const smtpPortOf = (gp: BenchGatepost) => Number(/SMTP submission listening on \S+:(\d+)/.exec(gp.output())![1]);
const certOf = (gp: BenchGatepost) => readFileSync(/self-signed certificate, (\S+):/.exec(gp.output())![1]!, 'utf8');

/** Waits until the sandbox has captured every id, and says how the accepted messages fared. */
async function verify(gp: BenchGatepost, ids: string[]): Promise<string[]> {
  const started = Date.now();
  const stored = await capturedUntil(gp, (inbox) => ids.every((id) => inbox.has(id)), started + 300_000);
  const missing = ids.filter((id) => !stored.has(id)).length;
  return [
    `accepted ids (warm-up + run): ${fmt(ids.length)}; captured in the sandbox inbox: ${fmt(stored.size)}; ` +
      `accepted but missing: ${missing}; capture backlog drained ${((Date.now() - started) / 1000).toFixed(1)} s after the load`,
  ];
}

/** A fresh Gatepost measured under `load`; then every accepted id must reach the capture inbox. */
async function gatepostRow(
  name: string,
  how: string,
  load: (gp: BenchGatepost, first: number, count: number) => Promise<Load>,
): Promise<Row> {
  const gp = await startGatepost(profileArgs(flags.profile));
  try {
    const row = await measure(
      name,
      how,
      () => [gp.pid],
      (first, count) => load(gp, first, count),
    );
    row.notes.push(...(await verify(gp, row.receipts)));
    return row;
  } finally {
    await gp.stop();
  }
}

const gatepostSmtpRow = (tls: boolean) =>
  gatepostRow(
    `Gatepost SMTP submission${tls ? ' (STARTTLS)' : ''}`,
    `${CONNECTIONS} SMTP connections`,
    async (gp, first, count) => {
      const target = {
        name: 'Gatepost',
        port: smtpPortOf(gp),
        ca: tls ? certOf(gp) : null,
        // Loopback: AUTH without TLS is allowed, as Postfix trusts its loopback network.
        auth: { user: 'bench', pass: gp.key },
        pids: () => [gp.pid],
      };
      const load = await smtpLoad(target, mail, CONNECTIONS, first, count);
      return { ...load, receipts: load.receipts.flatMap((r) => r.match(/msg_[0-9a-z]{26}/g) ?? []) };
    },
  );

const gatepostBatchRow = () =>
  gatepostRow(
    `Gatepost POST /v1/emails/batch (${BATCH} a request)`,
    `${BATCH} a request, 4 requests in flight`,
    async (gp, first, count) => {
      const load = emptyLoad();
      let next = first;
      const worker = async () => {
        while (next < first + count) {
          const from = next;
          next = Math.min(first + count, next + BATCH);
          const items = Array.from({ length: next - from }, (_, i) => sendBody(from + i));
          const started = performance.now();
          const res = await call(gp.url, 'POST', '/v1/emails/batch', gp.key, items);
          if (res.status !== 200) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
          load.latencies.push(performance.now() - started);
          for (const r of res.body.results) {
            if ('id' in r) (load.receipts.push(r.id), load.accepted++);
            else load.refused++;
          }
        }
      };
      await Promise.all(Array.from({ length: 4 }, worker));
      return load;
    },
  );

const gatepostSendRow = () =>
  gatepostRow('Gatepost POST /v1/emails', `${CONNECTIONS} HTTP connections`, (gp, first, count) => {
    const load = emptyLoad();
    let n = first;
    return new Promise((resolve, reject) =>
      autocannon(
        {
          url: gp.url,
          connections: CONNECTIONS,
          amount: count,
          requests: [
            {
              method: 'POST',
              path: '/v1/emails',
              headers: { authorization: `Bearer ${gp.key}`, 'content-type': 'application/json' },
              setupRequest: (request) => ({ ...request, body: JSON.stringify(sendBody(n++)) }),
              onResponse: (status, body) => {
                if (status === 202) (load.receipts.push((JSON.parse(body) as { id: string }).id), load.accepted++);
                else load.refused++;
              },
            },
          ],
        },
        // autocannon keeps a histogram, not each latency: its percentiles go in a note.
        (error, result) => {
          if (error) return reject(error);
          load.notes.push(`latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms (autocannon)`);
          resolve(load);
        },
      ),
    );
  });

// ---- the run ---------------------------------------------------------------------------------

async function main() {
  console.log(
    `bench:ingress on ${cpus().length} cores, Node ${process.version}, Gatepost at ${gatepostRevision()}; ` +
      `${MESSAGES} messages of about ${message(0).length} bytes after ${WARMUP} of warm-up, ${ROUNDS} rounds\n`,
  );
  const tls = flags.tls
    ? await generate([{ name: 'commonName', value: 'localhost' }], {
        keyType: 'ec',
        algorithm: 'sha256',
        extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
      })
    : null;
  // Postfix and Gatepost take turns, round after round, so that whatever else the machine does
  // falls on both alike; each round's ratio compares two runs made back to back.
  const only = flags['gatepost-only'];
  const rows: Row[] = [];
  const ratios: { plain: number[]; tls: number[] } = { plain: [], tls: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const roundRows: Row[] = [];
    for (const secure of tls ? [false, true] : [false]) {
      const postfix = only ? null : await postfixRow(secure ? { cert: tls!.cert, key: tls!.private } : null);
      const gatepost = await gatepostSmtpRow(secure);
      if (postfix) (secure ? ratios.tls : ratios.plain).push(rateOf(gatepost) / rateOf(postfix));
      roundRows.push(...(postfix ? [postfix] : []), gatepost);
    }
    for (const r of roundRows) r.name = `${r.name}, round ${round}`;
    rows.push(...roundRows);
  }
  if (!only) {
    rows.push(await gatepostBatchRow());
    rows.push(await gatepostSendRow());
  }

  console.log('\n' + rowsTable('way in', rows));
  const list = (xs: number[]) => xs.map((x) => fmt(x, 2)).join(', ');
  if (!only)
    console.log(
      `\nGatepost SMTP submission / Postfix, each round: ${list(ratios.plain)}; median ${fmt(median(ratios.plain), 2)} (target ≥ 2)`,
    );
  if (tls && !only)
    console.log(`over STARTTLS, each round:                     ${list(ratios.tls)}; median ${fmt(median(ratios.tls), 2)}`);
  console.log(
    `(latencies: SMTP per message, MAIL FROM to the 250 after DATA; batch per request of ${BATCH}; ` +
      'CPU in % of one core during the measured part; "other" is everything else on the machine: a fair round has it near 0)\n',
  );
  for (const r of rows) for (const note of r.notes) console.log(`${r.name}: ${note}`);
}

await main();
process.exit(0);
