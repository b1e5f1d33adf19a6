// A tiny authoritative DNS server on UDP loopback, for tests that need a host name to resolve to
// an address of their choosing (GATEPOST_DNS_SERVERS points Gatepost at it). Answers A and AAAA
// queries from a table the test can change at any time; other names get NXDOMAIN.
import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface DnsAnswers {
  A?: string[];
  AAAA?: string[];
}

export interface DnsServer {
  /** `127.0.0.1:<port>`, as GATEPOST_DNS_SERVERS takes it. */
  address: string;
  /** Name (lower case, no trailing dot) → answers, or a function giving the answers for each query. */
  records: Map<string, DnsAnswers | (() => DnsAnswers)>;
  /** Every question asked: `name TYPE`. */
  queries: string[];
  close(): Promise<void>;
}

const TYPE = { A: 1, AAAA: 28 } as const;

function ipBytes(ip: string): Buffer {
  return isIP(ip) === 4 ? Buffer.from(ip.split('.').map(Number)) : Buffer.from(ipaddr.IPv6.parse(ip).toByteArray());
}

function answer(query: Buffer, records: DnsServer['records'], asked: string[]): Buffer | null {
  if (query.length < 12) return null;
  const id = query.readUInt16BE(0);
  let at = 12;
  const labels: string[] = [];
  while (at < query.length && query[at] !== 0) {
    const len = query[at]!;
    labels.push(query.subarray(at + 1, at + 1 + len).toString('latin1'));
    at += 1 + len;
  }
  at += 1;
  const qtype = query.readUInt16BE(at);
  const question = query.subarray(12, at + 4);
  const name = labels.join('.').toLowerCase();
  asked.push(`${name} ${qtype === TYPE.A ? 'A' : qtype === TYPE.AAAA ? 'AAAA' : qtype}`);
  const entry = records.get(name);
  const answers = typeof entry === 'function' ? entry() : entry;
  const ips = !answers ? [] : qtype === TYPE.A ? (answers.A ?? []) : qtype === TYPE.AAAA ? (answers.AAAA ?? []) : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  // QR, AA, RD, RA; RCODE 3 (NXDOMAIN) for a name we do not know.
  header.writeUInt16BE(0x8580 | (answers ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(ips.length, 6);
  const records_ = ips.map((ip) => {
    const data = ipBytes(ip);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(qtype, 2);
    rr.writeUInt16BE(1, 4); // class IN
    rr.writeUInt32BE(0, 6); // TTL 0: never cached
    rr.writeUInt16BE(data.length, 10);
    return Buffer.concat([rr, data]);
  });
  return Buffer.concat([header, question, ...records_]);
}

export async function startDns(initial: Record<string, DnsAnswers | (() => DnsAnswers)> = {}): Promise<DnsServer> {
  const socket = createSocket('udp4');
  const records: DnsServer['records'] = new Map(Object.entries(initial));
  const queries: string[] = [];
  socket.on('message', (msg, rinfo) => {
    const reply = answer(msg, records, queries);
    if (reply) socket.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    records,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
