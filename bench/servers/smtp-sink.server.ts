// The MX of bench:deliver, a process of its own: an smtp-server that accepts every message
// (plain text, no AUTH), keeps it, and notes when it arrived. Each message carries `X-Bench-N`,
// the number the load gave it, so duplicates and latencies can be counted per message.
//   GET /stats            → {received, duplicates, unnumbered, arrivals: {n: ms since epoch}}
//   POST /reset
//   POST /verify {records} → each kept message's DKIM signatures checked by mailauth, with DNS
//                             answered from `records` (name → TXT strings): {messages, pass, fail, sample}
// SINK_SMTP_PORT picks the SMTP port (0: any free one); the HTTP port is printed as "listening on".
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { dkimVerify } from 'mailauth';
import { SMTPServer } from 'smtp-server';

let kept = new Map<number, Buffer>();
let arrivals = new Map<number, number>();
let duplicates = 0;
let unnumbered = 0;

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  size: 10 * 1024 * 1024,
  onData(stream, _session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const raw = Buffer.concat(chunks);
      const at = Date.now();
      const head = raw.subarray(0, Math.max(0, raw.indexOf('\r\n\r\n'))).toString('latin1');
      const n = /^X-Bench-N:\s*(\d+)/im.exec(head)?.[1];
      if (n === undefined) unnumbered++;
      else if (arrivals.has(Number(n))) duplicates++;
      else (arrivals.set(Number(n), at), kept.set(Number(n), raw));
      callback(null, 'Ok: kept');
    });
  },
});

async function verifyAll(records: Record<string, string[]>) {
  const resolver = async (name: string, type: string) => {
    const txt = type === 'TXT' ? records[name.toLowerCase()] : undefined;
    if (!txt) throw Object.assign(new Error(`no ${type} for ${name}`), { code: 'ENOTFOUND' });
    return txt.map((t) => [t]);
  };
  let pass = 0;
  let fail = 0;
  let sample = '';
  for (const raw of kept.values()) {
    const { results } = await dkimVerify(raw, { resolver });
    const ok = results.length > 0 && results.every((r: { status: { result: string } }) => r.status.result === 'pass');
    if (ok) pass++;
    else (fail++, (sample ||= JSON.stringify(results.map((r: { status: unknown }) => r.status))));
  }
  return { messages: kept.size, pass, fail, sample };
}

const control = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const json = (value: unknown) => (res.writeHead(200, { 'content-type': 'application/json' }), res.end(JSON.stringify(value)));
  if (req.url === '/stats')
    return json({ received: arrivals.size, duplicates, unnumbered, arrivals: Object.fromEntries(arrivals) });
  if (req.url === '/reset') return ((kept = new Map()), (arrivals = new Map()), (duplicates = unnumbered = 0), json({}));
  if (req.url === '/verify') return json(await verifyAll(JSON.parse(Buffer.concat(chunks).toString()).records));
  res.writeHead(404).end();
});

smtp.listen(Number(process.env.SINK_SMTP_PORT ?? 0), '127.0.0.1', () => {
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  control.listen(0, '127.0.0.1', () => {
    console.log(`SMTP sink on 127.0.0.1:${smtpPort}; listening on http://127.0.0.1:${(control.address() as AddressInfo).port}`);
  });
});
