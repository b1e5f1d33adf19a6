// npm run bench:deliver [-- --messages 5000 --connections 20 --rate 150 --paced 10 --rounds 2]
// Messages delivered per second, 1 KB each, DKIM-signed, to one SMTP sink that the loopback DNS
// names as the recipients' MX (bench/servers/smtp-sink.server.ts, a process of its own), by:
// - Gatepost: sent through POST /v1/emails with a live key of a tenant whose domain is verified,
//   delivered directly (no relay) and signed twice (RSA-2048 and Ed25519);
// - Debian's Postfix with Debian's OpenDKIM as its milter (RSA-2048), taking the same messages
//   by SMTP and relaying them to the same sink.
// Each round measures both, in turns: a burst (`messages` over `connections`, as fast as each
// takes them; delivered/s is messages over the time from the first submission to the last
// arrival), then a paced load at the same offered rate for both (`rate` a second for `paced`
// seconds), whose submission-to-arrival latency p50/p99 is reported. Afterwards the sink checks
// every message's DKIM signatures with mailauth against the records the loopback DNS serves, and
// counts duplicates: every message must arrive once and pass.
import { execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { freePort } from '../dapr/cluster/cluster.ts';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import {
  call,
  cpuSince,
  cpuSnapshot,
  fmt,
  gatepostRevision,
  inTurns,
  median,
  percentile,
  profileArgs,
  sleep,
  startChild,
  startGatepost,
  table,
  waitForQuiet,
  type Child,
} from './common.ts';
import { ensureDebian, startPostfix } from './postfix.ts';

const { values: flags } = parseArgs({
  options: {
    messages: { type: 'string', default: '5000' },
    connections: { type: 'string', default: '20' },
    rate: { type: 'string', default: '150' },
    paced: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    /** One sender only (`postfix` or `gatepost`), to try a change quickly; no ratio. */
    only: { type: 'string' },
    /** Write a CPU profile of Gatepost (node --cpu-prof) into this directory. */
    profile: { type: 'string' },
  },
});
const MESSAGES = Number(flags.messages);
const CONNECTIONS = Number(flags.connections);
const RATE = Number(flags.rate);
const PACED = Math.round(RATE * Number(flags.paced));
const ROUNDS = Number(flags.rounds);
const SENDER_DOMAIN = 'sender.bench.test';
const SINK_DOMAIN = 'sink.bench.test';
const ARRIVAL_WAIT_MS = 300_000;

// A plain-text body that brings each message to about 1 KB with its headers.
const FILLER = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the shipping notice: your parcel is on its way.`)
  .join('\r\n')
  .slice(0, 760);

interface Sink {
  child: Child;
  smtpPort: number;
  stats(): Promise<{ received: number; duplicates: number; unnumbered: number; arrivals: Record<string, number> }>;
  reset(): Promise<void>;
  verify(records: Record<string, string[]>): Promise<{ messages: number; pass: number; fail: number; sample: string }>;
}

async function startSink(): Promise<Sink> {
  const child = await startChild('SMTP sink', ['bench/servers/smtp-sink.server.ts']);
  const smtpPort = Number(/SMTP sink on \S+:(\d+)/.exec(child.output())![1]);
  const get = async (path: string) => (await fetch(child.url + path)).json();
  const post = async (path: string, body: unknown = {}) =>
    (await fetch(child.url + path, { method: 'POST', body: JSON.stringify(body) })).json();
  return {
    child,
    smtpPort,
    stats: () => get('/stats'),
    reset: async () => void (await post('/reset')),
    verify: (records) => post('/verify', { records }),
  };
}

/** What one sender did with one load: when each message was submitted, and what was refused. */
interface Submitted {
  at: Map<number, number>;
  refused: number;
  errors: string[];
}

/** Submits messages `first`..`first+count-1`, `CONNECTIONS` at a time, at most `rate` a second if given. */
async function submit(
  first: number,
  count: number,
  rate: number | null,
  open: () => Promise<(n: number) => Promise<void>>,
): Promise<Submitted> {
  const done: Submitted = { at: new Map(), refused: 0, errors: [] };
  const start = performance.now();
  let next = first;
  const worker = async () => {
    const send = await open();
    while (next < first + count) {
      const n = next++;
      if (rate) {
        const due = start + ((n - first) * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
      }
      const at = Date.now();
      try {
        await send(n);
        done.at.set(n, at);
      } catch (error) {
        done.refused++;
        if (done.errors.length < 3) done.errors.push((error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return done;
}

interface Phase {
  submitted: number;
  refused: number;
  arrived: number;
  /** First submission to last arrival. */
  seconds: number;
  latencies: number[];
  cpu: number;
  /** Every arrived message's DKIM signatures, checked by the sink. */
  dkim: { messages: number; pass: number; fail: number; sample: string };
  notes: string[];
}

/** Runs a load, waits for every accepted message at the sink, and measures from the sink's arrivals. */
async function phase(sink: Sink, dns: DnsServer, pids: () => number[], load: () => Promise<Submitted>): Promise<Phase> {
  await sink.reset();
  const cpu = cpuSnapshot(pids());
  const sent = await load();
  const deadline = Date.now() + ARRIVAL_WAIT_MS;
  let stats = await sink.stats();
  while (stats.received < sent.at.size && Date.now() < deadline) {
    await sleep(200);
    stats = await sink.stats();
  }
  const used = cpuSince(cpu).server;
  const first = Math.min(...sent.at.values());
  const arrivals = Object.entries(stats.arrivals).map(([n, t]) => ({ n: Number(n), t }));
  const last = Math.max(...arrivals.map((a) => a.t));
  const latencies = arrivals
    .filter((a) => sent.at.has(a.n))
    .map((a) => a.t - sent.at.get(a.n)!)
    .sort((a, b) => a - b);
  return {
    submitted: sent.at.size,
    refused: sent.refused,
    arrived: stats.received,
    seconds: (last - first) / 1000,
    latencies,
    cpu: used,
    dkim: await sink.verify(txtRecords(dns)),
    notes: [
      ...sent.errors.map((e) => `refused: ${e}`),
      ...(stats.duplicates ? [`${stats.duplicates} duplicates at the sink`] : []),
      ...(stats.unnumbered ? [`${stats.unnumbered} unnumbered messages at the sink`] : []),
    ],
  };
}

interface Run {
  name: string;
  burst: Phase;
  paced: Phase;
}

// ---- Postfix + OpenDKIM ----------------------------------------------------------------------

function rsaDkim(selector: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return {
    pem: privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
    record: [`${selector}._domainkey.${SENDER_DOMAIN}`, `v=DKIM1; k=rsa; p=${p}`] as const,
  };
}

/** Debian's OpenDKIM in the foreground, signing mail from SENDER_DOMAIN with an RSA-2048 key. */
async function startOpenDkim(selector: string, pem: string) {
  ensureDebian('opendkim', ['opendkim']);
  const dir = mkdtempSync(join(tmpdir(), 'gatepost-bench-opendkim-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const keyFile = join(dir, 'key.pem');
  writeFileSync(keyFile, pem, { mode: 0o600 });
  const conf = join(dir, 'opendkim.conf');
  writeFileSync(
    conf,
    [
      'Syslog no',
      'Mode s',
      `Domain ${SENDER_DOMAIN}`,
      `Selector ${selector}`,
      `KeyFile ${keyFile}`,
      `Socket inet:${port}@127.0.0.1`,
      'Canonicalization relaxed/relaxed',
      'SignatureAlgorithm rsa-sha256',
      'UserID opendkim',
      'RequireSafeKeys false',
      `PidFile ${dir}/opendkim.pid`,
      '',
    ].join('\n'),
  );
  chownSync(keyFile, uidOf('opendkim'), 0);
  const proc = spawn('opendkim', ['-f', '-x', conf], { stdio: ['ignore', 'inherit', 'inherit'] });
  for (let i = 0; i < 100 && !(await listening(port)); i++) await sleep(100);
  return {
    port,
    pid: proc.pid!,
    stop() {
      proc.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const uidOf = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());

/** Whether something accepts TCP connections on the port (a milter says nothing first). */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });

function smtpMessage(n: number): Buffer {
  return Buffer.from(
    `From: Shop <shop@${SENDER_DOMAIN}>\r\nTo: user${n}@${SINK_DOMAIN}\r\nSubject: Order ${n} has shipped\r\n` +
      `Message-ID: <${n}.${Date.now()}@${SENDER_DOMAIN}>\r\nDate: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\n` +
      `Content-Type: text/plain; charset=us-ascii\r\nX-Bench-N: ${n}\r\n\r\n${FILLER}\r\n`,
  );
}

const promised = <T>(fn: (cb: (error: Error | null, value: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((error, value) => (error ? reject(error) : resolve(value))));

/** A persistent SMTP connection to `port`, sending message n on each call. */
const smtpSender = (port: number) => async () => {
  const c = new SMTPConnection({ host: '127.0.0.1', port, name: 'loadgen.bench.test', ignoreTLS: true });
  c.on('error', () => undefined);
  await promised<void>((cb) => c.connect(() => cb(null, undefined)));
  return (n: number) =>
    promised<void>((cb) =>
      c.send({ from: `shop@${SENDER_DOMAIN}`, to: [`user${n}@${SINK_DOMAIN}`] }, smtpMessage(n), cb as never),
    );
};

async function postfixRun(sink: Sink, dns: DnsServer, offset: number): Promise<Run> {
  const selector = 'opendkim';
  const key = rsaDkim(selector);
  dns.records.set(key.record[0], { TXT: [key.record[1]] });
  const dkim = await startOpenDkim(selector, key.pem);
  const postfix = await startPostfix({ relayPort: sink.smtpPort, milterPort: dkim.port });
  try {
    const pids = () => [...postfix.pids(), dkim.pid];
    const open = smtpSender(postfix.port);
    await waitForQuiet(15, 120_000);
    const burst = await phase(sink, dns, pids, () => submit(offset, MESSAGES, null, open));
    const paced = await phase(sink, dns, pids, () => submit(offset + MESSAGES, PACED, RATE, open));
    return { name: `Postfix ${postfix.version} + OpenDKIM`, burst, paced };
  } finally {
    postfix.stop();
    dkim.stop();
  }
}

// ---- Gatepost --------------------------------------------------------------------------------

async function gatepostRun(sink: Sink, dns: DnsServer, offset: number): Promise<Run> {
  const gp = await startGatepost(profileArgs(flags.profile), {
    GATEPOST_DNS_SERVERS: dns.address,
    GATEPOST_MX_PORT: String(sink.smtpPort),
    GATEPOST_HOSTNAME: 'gatepost.bench.test',
  });
  try {
    const live = await call(gp.url, 'POST', `/v1/admin/tenants/${gp.tenantId}/keys`, gp.adminToken, { kind: 'live' });
    if (live.status !== 201) throw new Error(`creating a live key: ${live.status} ${JSON.stringify(live.body)}`);
    const key = live.body.key as string;
    const domain = await call(gp.url, 'POST', '/v1/domains', key, { name: SENDER_DOMAIN });
    if (domain.status !== 201) throw new Error(`creating the domain: ${domain.status} ${JSON.stringify(domain.body)}`);
    for (const r of domain.body.records as { type: string; name: string; value: string }[])
      if (r.type === 'TXT') dns.records.set(r.name, { TXT: [r.value] });
    const verified = await call(gp.url, 'POST', `/v1/domains/${domain.body.id}/verify`, key);
    if (verified.body?.status !== 'verified') throw new Error(`verifying the domain: ${JSON.stringify(verified.body)}`);

    const open = async () => async (n: number) => {
      const res = await call(gp.url, 'POST', '/v1/emails', key, {
        from: `Shop <shop@${SENDER_DOMAIN}>`,
        to: `user${n}@${SINK_DOMAIN}`,
        subject: `Order ${n} has shipped`,
        html: `<p>${FILLER.replaceAll('\r\n', '<br>')}</p>`,
        headers: { 'X-Bench-N': String(n) },
      });
      if (res.status !== 202) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    };
    const pids = () => [gp.pid];
    await waitForQuiet(15, 120_000);
    const burst = await phase(sink, dns, pids, () => submit(offset, MESSAGES, null, open));
    const paced = await phase(sink, dns, pids, () => submit(offset + MESSAGES, PACED, RATE, open));
    return { name: 'Gatepost (direct, RSA-2048 + Ed25519)', burst, paced };
  } finally {
    await gp.stop();
  }
}

const txtRecords = (dns: DnsServer): Record<string, string[]> =>
  Object.fromEntries(
    [...dns.records].flatMap(([name, a]) => {
      const txt = (typeof a === 'function' ? a() : a).TXT;
      return txt ? [[name, txt]] : [];
    }),
  );

// ---- the run ---------------------------------------------------------------------------------

const rateOf = (p: Phase) => p.arrived / p.seconds;

async function main() {
  console.log(
    `bench:deliver on ${cpus().length} cores, Node ${process.version}, Gatepost at ${gatepostRevision()}; ` +
      `${MESSAGES} messages of about ${smtpMessage(0).length} bytes a burst over ${CONNECTIONS} connections, ` +
      `then ${PACED} at ${RATE}/s; ${ROUNDS} rounds\n`,
  );
  const dns = await startDns(
    {
      [SINK_DOMAIN]: { MX: [{ exchange: `mx.${SINK_DOMAIN}`, priority: 10 }] },
      [`mx.${SINK_DOMAIN}`]: { A: ['127.0.0.1'] },
      [SENDER_DOMAIN]: { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
      // A TTL as real records have: a sender may keep the answers a while, as a caching resolver does.
    },
    { ttl: 300 },
  );
  const sink = await startSink();
  try {
    let offset = 0;
    const next = () => (offset += MESSAGES + PACED + 1000) - (MESSAGES + PACED + 1000);
    const senders = { postfix: () => postfixRun(sink, dns, next()), gatepost: () => gatepostRun(sink, dns, next()) };
    const rounds = await inTurns(
      ROUNDS,
      flags.only ? [senders[flags.only as keyof typeof senders]] : [senders.postfix, senders.gatepost],
    );
    const rows = rounds.flatMap((runs, i) => runs.map((r) => ({ ...r, name: `${r.name}, round ${i + 1}` })));
    console.log(
      '\n' +
        table(
          [
            'sender',
            'delivered/s',
            'delivered',
            'refused',
            'server CPU',
            `p50 ms at ${RATE}/s`,
            `p99 ms at ${RATE}/s`,
            'DKIM pass',
            'DKIM fail',
          ],
          rows.map((r) => [
            r.name,
            fmt(rateOf(r.burst)),
            `${fmt(r.burst.arrived)}/${fmt(r.burst.submitted)}`,
            fmt(r.burst.refused + r.paced.refused),
            `${fmt(r.burst.cpu)}%`,
            fmt(percentile(r.paced.latencies, 50), 1),
            fmt(percentile(r.paced.latencies, 99), 1),
            fmt(r.burst.dkim.pass + r.paced.dkim.pass),
            fmt(r.burst.dkim.fail + r.paced.dkim.fail),
          ]),
        ),
    );
    for (const r of rows) {
      for (const note of [...r.burst.notes, ...r.paced.notes]) console.log(`${r.name}: ${note}`);
      const failed = r.burst.dkim.sample || r.paced.dkim.sample;
      if (failed) console.log(`${r.name}: a failed DKIM check: ${failed}`);
    }
    if (flags.only) return;
    const ratios = rounds.map(([postfix, gatepost]) => rateOf(gatepost!.burst) / rateOf(postfix!.burst));
    console.log(
      `\nGatepost / Postfix + OpenDKIM, delivered/s, each round: ${ratios.map((x) => fmt(x, 2)).join(', ')}; ` +
        `median ${fmt(median(ratios), 2)} (goal ≥ 2)`,
    );
    console.log('(server CPU in % of one core during the burst and the wait for its last arrival)\n');
  } finally {
    await sink.child.stop();
    await dns.close();
  }
}

await main();
process.exit(0);
