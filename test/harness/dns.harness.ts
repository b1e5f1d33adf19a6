// A small authoritative DNS server on UDP loopback, for tests that need names to resolve as they
// choose (GATEPOST_DNS_SERVERS points Gatepost at it): A, AAAA, MX, TXT and CNAME records from a table
// the test can change at any time; a name not in it gets NXDOMAIN, a type it lacks no answers, a
// name marked SERVFAIL that failure.
// dns-packet reads the queries and writes the answers.
import dnsPacket, { type Answer, type Packet } from 'dns-packet';
import { createSocket } from 'node:dgram';

export interface DnsAnswers {
  A?: string[];
  AAAA?: string[];
  MX?: { exchange: string; priority: number }[];
  /** Each string is one TXT record (a long one is split into 255-byte strings, as RFC 7208 §3.3 has it). */
  TXT?: string[];
  /** The name's canonical name: answered to a CNAME question (no chasing of it to other types). */
  CNAME?: string;
  /** Answer every question about the name with SERVFAIL (rcode 2): a server that cannot answer for it. */
  SERVFAIL?: true;
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

/**
 * TTL 0 unless asked otherwise: no resolver keeps an answer, so a test that changes a record is
 * heard at once. (Gatepost keeps an MX route a minute whatever its TTL: mta/mx.resolve.ts.)
 */
const TTL = 0;

function recordsOf(name: string, type: string, answers: DnsAnswers, ttl: number): Answer[] {
  const base = { name, ttl, class: 'IN' as const };
  switch (type) {
    case 'A':
      return (answers.A ?? []).map((data) => ({ ...base, type: 'A', data }));
    case 'AAAA':
      return (answers.AAAA ?? []).map((data) => ({ ...base, type: 'AAAA', data }));
    case 'MX':
      return (answers.MX ?? []).map(({ exchange, priority }) => ({
        ...base,
        type: 'MX',
        data: { exchange, preference: priority },
      }));
    case 'TXT':
      return (answers.TXT ?? []).map((text) => {
        const bytes = Buffer.from(text);
        const strings: Buffer[] = [];
        for (let at = 0; at < bytes.length || strings.length === 0; at += 255) strings.push(bytes.subarray(at, at + 255));
        return { ...base, type: 'TXT', data: strings };
      });
    case 'CNAME':
      return answers.CNAME ? [{ ...base, type: 'CNAME', data: answers.CNAME }] : [];
    default:
      return [];
  }
}

function reply(query: Packet, records: DnsServer['records'], asked: string[], ttl: number): Buffer {
  const question = query.questions?.[0];
  const answers: Answer[] = [];
  let rcode = 0;
  if (question) {
    const name = question.name.toLowerCase().replace(/\.$/, '');
    asked.push(`${name} ${question.type}`);
    const entry = records.get(name);
    const found = typeof entry === 'function' ? entry() : entry;
    // NXDOMAIN (rcode 3) for a name not in the table.
    rcode = !found ? 3 : found.SERVFAIL ? 2 : 0;
    if (found && !found.SERVFAIL) answers.push(...recordsOf(question.name, question.type, found, ttl));
  }
  return dnsPacket.encode({
    id: query.id,
    type: 'response',
    // Authoritative, recursion desired and available, and the rcode.
    flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
    questions: query.questions,
    answers,
  });
}

export async function startDns(
  initial: Record<string, DnsAnswers | (() => DnsAnswers)> = {},
  { ttl = TTL }: { ttl?: number } = {},
): Promise<DnsServer> {
  const socket = createSocket('udp4');
  const records: DnsServer['records'] = new Map(Object.entries(initial));
  const queries: string[] = [];
  socket.on('message', (message, from) => {
    let query: Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return; // not DNS: no answer, as any server
    }
    socket.send(reply(query, records, queries, ttl), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    records,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
