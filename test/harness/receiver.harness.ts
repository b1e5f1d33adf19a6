// A webhook receiver for tests: a real HTTP or HTTPS server (a self-signed certificate made here,
// trusted by Gatepost through NODE_EXTRA_CA_CERTS) that records every request with its raw body
// and answers as the test says. It also counts TCP connections, so a test can prove that nothing
// reached it.
import { writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import selfsigned from 'selfsigned';
import { tempDir } from './gatepost.harness.ts';

export interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as received. */
  body: string;
  at: number;
}

export type Answer = number | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

export interface Receiver {
  /** `https://<host>:<port>` (or http), with the host the receiver was started for. */
  url: string;
  port: number;
  received: Delivery[];
  /** TCP connections accepted so far. */
  connections: number;
  /** How to answer each delivery: 200 by default. */
  respond: (d: Delivery) => Answer;
  /** The deliveries of one event id. */
  byEvent(id: string): Delivery[];
  close(): Promise<void>;
}

export interface Certificate {
  key: string;
  cert: string;
  /** The certificate written to a file, for NODE_EXTRA_CA_CERTS. */
  certFile: string;
}

/** A self-signed certificate for `names` (DNS) and `ips`, valid from an hour ago for a year. */
export async function selfSignedCertificate(names = ['localhost'], ips = ['127.0.0.1', '::1']): Promise<Certificate> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: names[0] ?? 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 3600_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...names.map((value) => ({ type: 2 as const, value })), ...ips.map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  const certFile = join(tempDir('webhook-ca'), 'ca.pem');
  writeFileSync(certFile, pems.cert);
  return { key: pems.private, cert: pems.cert, certFile };
}

export async function startReceiver(
  opts: { tls?: Certificate; host?: string; urlHost?: string; port?: number } = {},
): Promise<Receiver> {
  const host = opts.host ?? '127.0.0.1';
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const d: Delivery = {
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      receiver.received.push(d);
      const answer = receiver.respond(d);
      const a = typeof answer === 'number' ? { status: answer } : answer;
      const send = () => {
        res.writeHead(a.status, a.headers);
        res.end(a.body ?? '');
      };
      if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  };
  const server = opts.tls ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, handler) : http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    connections: 0,
    respond: () => 200,
    byEvent: (id) => receiver.received.filter((d) => JSON.parse(d.body).id === id),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  server.on('connection', () => receiver.connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  receiver.port = (server.address() as AddressInfo).port;
  const urlHost = opts.urlHost ?? (host.includes(':') ? `[${host}]` : host);
  receiver.url = `${opts.tls ? 'https' : 'http'}://${urlHost}:${receiver.port}`;
  return receiver;
}
