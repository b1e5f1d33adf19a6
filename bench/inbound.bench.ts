// npm run bench:inbound [-- --messages 5000 --warmup 500 --connections 20 --rounds 2 --profile DIR]
// Inbound mail accepted per second, on the same machine in the same run:
// - Gatepost's inbound MX: `connections` persistent SMTP connections, each sending DKIM-signed
//   messages of about 5 KB (one recipient each) to an inbound route; each message is verified
//   (SPF, DKIM, DMARC against a DNS server of the bench's own on loopback), kept, and posted as a
//   signed email.inbound webhook to a local receiver, which verifies every signature. Nothing may
//   be lost: every accepted message must reach the receiver, and a sample must carry passing verdicts.
// - Debian's Postfix under the same load, accepting into its queue (fsync before the 250) and
//   discarding: an MTA that verifies nothing, the peer to beat (issue 23: at least 1 ×).
// The two take turns, `rounds` times; each round's ratio compares two runs made back to back.
import { generateKeyPairSync } from 'node:crypto';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { dkimSign, type DKIMSignOptions } from 'mailauth';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { publish } from '../test/harness/domains.harness.ts';
import {
  call,
  cpuSince,
  cpuSnapshot,
  fmt,
  gatepostRevision,
  median,
  profileArgs,
  sleep,
  startChild,
  startGatepost,
  waitForQuiet,
  type Child,
} from './common.ts';
import { startPostfix } from './postfix.ts';
import { rateOf, rowsTable, smtpLoad, type Load, type Row, type SmtpTarget } from './smtp.load.ts';

const { values: flags } = parseArgs({
  options: {
    messages: { type: 'string', default: '5000' },
    warmup: { type: 'string', default: '500' },
    connections: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    /** Write a CPU profile of Gatepost (node --cpu-prof) into this directory. */
    profile: { type: 'string' },
  },
});
const MESSAGES = Number(flags.messages);
const WARMUP = Number(flags.warmup);
const CONNECTIONS = Number(flags.connections);
const ROUNDS = Number(flags.rounds);
const TOTAL = WARMUP + MESSAGES;
const SENDER = 'news.bench.example';
const INBOUND = 'inbound.bench.example';

// ---- the messages: signed once, before anything is measured ----------------------------------

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PARAGRAPH =
  'Thank you for your order. Your parcel left our warehouse this morning and should reach you within two working days. ';
const BODY = Array.from({ length: 40 }, (_, i) => `${i + 1}. ${PARAGRAPH}`).join('\r\n');

async function signed(n: number): Promise<Buffer> {
  const raw =
    `From: Shop News <hello@${SENDER}>\r\nTo: reader${n}@${INBOUND}\r\nSubject: Your order ${n}\r\n` +
    `Message-ID: <${n}.${Date.now().toString(36)}@${SENDER}>\r\nDate: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\n` +
    `Content-Type: text/plain; charset=us-ascii\r\n\r\n${BODY}\r\n`;
  // mailauth's own type wants the one-signature form, which signs nothing: signatureData does.
  const { signatures } = await dkimSign(raw, {
    signatureData: [
      { signingDomain: SENDER, selector: 'b1', privateKey: PEM, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed' },
    ],
  } as unknown as DKIMSignOptions);
  return Buffer.from(signatures + raw);
}

/** The sender's DNS: its DKIM key, an SPF record for the load generator's address, DMARC p=reject. */
function publishSender(dns: DnsServer): void {
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  dns.records.set(`b1._domainkey.${SENDER}`, { TXT: [`v=DKIM1; k=rsa; p=${p}`] });
  dns.records.set(SENDER, { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  dns.records.set(`_dmarc.${SENDER}`, { TXT: ['v=DMARC1; p=reject'] });
}

// ---- one measurement --------------------------------------------------------------------------

async function measure(target: SmtpTarget, messages: Buffer[]): Promise<Row & { receipts: string[] }> {
  const busy = await waitForQuiet(15, 180_000);
  console.log(
    `${target.name}: ${WARMUP} of warm-up, then ${MESSAGES} messages on ${CONNECTIONS} connections (machine ${fmt(busy)}% busy before)`,
  );
  const mail = (n: number) => ({ from: `hello@${SENDER}`, to: `reader${n}@${INBOUND}`, raw: messages[n]! });
  const warm: Load = await smtpLoad(target, mail, CONNECTIONS, 0, WARMUP);
  const cpu = cpuSnapshot(target.pids());
  const started = performance.now();
  const run = await smtpLoad(target, mail, CONNECTIONS, WARMUP, MESSAGES);
  const seconds = (performance.now() - started) / 1000;
  return {
    name: target.name,
    accepted: run.accepted,
    seconds,
    refused: warm.refused + run.refused,
    latencies: run.latencies.sort((a, b) => a - b),
    cpu: cpuSince(cpu),
    notes: [...new Set([...warm.notes, ...run.notes])].slice(0, 3),
    receipts: [...warm.receipts, ...run.receipts],
  };
}

async function postfixRow(messages: Buffer[]): Promise<Row> {
  const postfix = await startPostfix();
  try {
    const row = await measure(
      { name: `Postfix ${postfix.version}`, port: postfix.port, ca: null, auth: null, pids: postfix.pids },
      messages,
    );
    const queued = row.receipts.filter((r) => /^250 2\.0\.0 Ok: queued as /.test(r)).length;
    row.notes.push(`250 "queued" answers: ${fmt(queued)}`);
    return row;
  } finally {
    postfix.stop();
  }
}

const inboundPortOf = (output: string) => Number(/Inbound MX listening on \S+:(\d+)/.exec(output)![1]);

async function gatepostRow(messages: Buffer[], receiver: Child): Promise<Row> {
  // A DNS server of each round's own: the sender's records, and the inbound domain's made anew.
  const dns = await startDns({});
  publishSender(dns);
  const gp = await startGatepost(profileArgs(flags.profile), {
    GATEPOST_DNS_SERVERS: dns.address,
    GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8',
    GATEPOST_HOSTNAME: 'mx.gatepost.bench',
  });
  try {
    // A live key of the bench's tenant, its inbound domain verified, a catch-all route and an endpoint.
    const live = (await call(gp.url, 'POST', `/v1/admin/tenants/${gp.tenantId}/keys`, gp.adminToken, { kind: 'live' })).body.key;
    const domain = await call(gp.url, 'POST', '/v1/domains', live, { name: INBOUND });
    publish(dns, domain.body.records);
    const verified = await call(gp.url, 'POST', `/v1/domains/${domain.body.id}/verify`, live);
    if (verified.body.status !== 'verified') throw new Error(`${INBOUND} did not verify: ${JSON.stringify(verified.body)}`);
    const route = await call(gp.url, 'POST', '/v1/inbound/routes', live, { match: `*@${INBOUND}` });
    if (route.status !== 201) throw new Error(`route: ${route.status} ${JSON.stringify(route.body)}`);
    const hook = await call(gp.url, 'POST', '/v1/webhooks', live, { url: `${receiver.url}/inbound`, events: ['email.inbound'] });
    if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
    await fetch(`${receiver.url}/reset`, { method: 'POST' });
    await fetch(`${receiver.url}/secrets`, { method: 'POST', body: JSON.stringify({ '/inbound': hook.body.secret }) });

    const row = await measure(
      { name: 'Gatepost inbound MX', port: inboundPortOf(gp.output()), ca: null, auth: null, pids: () => [gp.pid] },
      messages,
    );
    // Nothing lost: every accepted message reaches the receiver as a verified webhook.
    const ids = row.receipts.flatMap((r) => r.match(/inm_[0-9a-z]+/g) ?? []);
    const started = Date.now();
    let stats = { deliveries: 0, duplicates: 0, failures: 0 };
    while (Date.now() - started < 300_000) {
      stats = await (await fetch(`${receiver.url}/stats`)).json();
      if (stats.deliveries >= ids.length) break;
      await sleep(500);
    }
    row.notes.push(
      `accepted (warm-up + run): ${fmt(ids.length)}; signed email.inbound webhooks verified at the receiver: ${fmt(stats.deliveries)} ` +
        `(${stats.duplicates} repeated, ${stats.failures} failing verification), ${((Date.now() - started) / 1000).toFixed(1)} s after the load`,
    );
    // The verdicts of a sample.
    const verdicts = new Map<string, number>();
    for (const id of ids.filter((_, i) => i % Math.ceil(ids.length / 20) === 0)) {
      const { auth } = (await call(gp.url, 'GET', `/v1/inbound/messages/${id}`, live)).body;
      const key = `spf ${auth.spf.result}, dkim ${auth.dkim.map((d: { result: string }) => d.result).join('+')}, dmarc ${auth.dmarc.result}`;
      verdicts.set(key, (verdicts.get(key) ?? 0) + 1);
    }
    row.notes.push(`verdicts of a sample: ${[...verdicts].map(([k, n]) => `${n} × ${k}`).join('; ')}`);
    return row;
  } finally {
    await gp.stop();
    await dns.close();
  }
}

// ---- the run ---------------------------------------------------------------------------------

async function main() {
  const messages = await Promise.all(Array.from({ length: TOTAL }, (_, n) => signed(n)));
  console.log(
    `bench:inbound on ${cpus().length} cores, Node ${process.version}, Gatepost at ${gatepostRevision()}; ` +
      `${MESSAGES} DKIM-signed messages of ${fmt(messages[0]!.length)} bytes after ${WARMUP} of warm-up, ${ROUNDS} rounds\n`,
  );
  const receiver = await startChild('receiver', ['bench/servers/webhook-receiver.server.ts']);
  const rows: Row[] = [];
  const ratios: number[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const postfix = await postfixRow(messages);
      const gatepost = await gatepostRow(messages, receiver);
      ratios.push(rateOf(gatepost) / rateOf(postfix));
      for (const r of [postfix, gatepost]) rows.push({ ...r, name: `${r.name}, round ${round}` });
    }
  } finally {
    await receiver.stop();
  }
  console.log('\n' + rowsTable('server', rows));
  console.log(
    `\nGatepost inbound MX (verdicts + webhooks) / Postfix (queue only), each round: ${ratios.map((x) => fmt(x, 2)).join(', ')}; ` +
      `median ${fmt(median(ratios), 2)} (goal ≥ 1)`,
  );
  console.log('(latency per message, MAIL FROM to the 250 after DATA; CPU in % of one core during the measured part)\n');
  for (const r of rows) for (const note of r.notes) console.log(`${r.name}: ${note}`);
}

await main();
process.exit(0);
