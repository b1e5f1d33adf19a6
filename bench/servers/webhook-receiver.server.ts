// The webhook receiver of bench:webhooks, a process of its own: it verifies every delivery with
// the SDK's verifyWebhook (the endpoint's secret, by path), counts the first delivery of each
// (event, endpoint) and how long after the event's commit (its created_at) it arrived. /dead
// accepts a request and never answers: a receiver that hangs.
//   POST /secrets {path: secret, …}   POST /reset   GET /stats
import http from 'node:http';
import { verifyWebhook } from '../../sdk/node/webhooks.ts';

let secrets = new Map<string, string>();
let seen = new Set<string>();
let delays: number[] = [];
let perPath = new Map<string, number>();
let duplicates = 0;
let failures = 0;
let first = 0;
let last = 0;

function read(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const server = http.createServer(async (req, res) => {
  const path = req.url ?? '';
  if (path === '/dead') return; // never answers
  const body = await read(req);
  const json = (status: number, value: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  if (path === '/secrets') {
    for (const [p, s] of Object.entries(JSON.parse(body) as Record<string, string>)) secrets.set(p, s);
    return json(200, { secrets: secrets.size });
  }
  if (path === '/reset') {
    seen = new Set();
    delays = [];
    perPath = new Map();
    duplicates = failures = first = last = 0;
    return json(200, {});
  }
  if (path === '/stats') {
    delays.sort((a, b) => a - b);
    return json(200, { deliveries: seen.size, duplicates, failures, first, last, delays, perPath: Object.fromEntries(perPath) });
  }
  const secret = secrets.get(path);
  try {
    if (!secret) throw new Error(`no secret for ${path}`);
    const event = verifyWebhook({ payload: body, headers: req.headers, secret });
    const now = Date.now();
    const key = `${event.id} ${path}`;
    if (seen.has(key)) duplicates++;
    else {
      seen.add(key);
      delays.push(now - Date.parse(event.created_at));
      perPath.set(path, (perPath.get(path) ?? 0) + 1);
      first ||= now;
      last = now;
    }
    res.writeHead(200).end();
  } catch {
    failures++;
    res.writeHead(400).end();
  }
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`webhook receiver listening on http://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
