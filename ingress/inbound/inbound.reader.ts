// Reading a received message on a thread of its own: its verdicts (mail/verdicts.ts: mailauth's
// SPF, DKIM, DMARC and ARC checks) and its parse (inbound.payload.ts: mailparser). On the event
// loop, between the SMTP sessions' work, these held each message for tens of milliseconds of
// streams and ticks; on the thread they run beside it, with a DNS cache of the thread's own
// (lib/dns.ts keptRecords), and the event loop only posts and receives.
import type { DNSResolver } from 'mailauth';
import { jobThread } from '../../lib/thread.ts';
import { verdictsOf, type Connection } from '../../mail/verdicts.ts';
import type { InboundAttachment } from '../../store/catalog.port.ts';
import { parseInbound, type InboundPayload } from './inbound.payload.ts';

export interface Read {
  payload: InboundPayload;
  attachments: InboundAttachment[];
}

export interface ReadJob {
  raw: Uint8Array;
  connection: Connection;
}

export interface InboundReader {
  read(raw: Buffer, connection: Connection): Promise<Read>;
  close(): Promise<void>;
}

/** The verdicts, then the payload they go on, with the attachments' bytes apart. */
export async function readInbound(raw: Buffer, connection: Connection, resolver: DNSResolver): Promise<Read> {
  return parseInbound(raw, await verdictsOf(raw, connection, resolver));
}

/** One thread for every session, asking `dnsServers` (GATEPOST_DNS_SERVERS; the system's when null). */
export function threadReader(dnsServers: readonly string[] | null): InboundReader {
  const thread = jobThread<ReadJob, Read>(import.meta.url, 'inbound.reader.worker', { workerData: { dnsServers } });
  return {
    async read(raw, connection) {
      // A copy of exactly the message, handed over: a Buffer may be a view of a larger one, which would be cloned whole.
      const bytes = new Uint8Array(raw);
      const read = await thread.run({ raw: bytes, connection }, [bytes.buffer]);
      // Buffers arrive from a thread as plain Uint8Arrays.
      for (const a of read.attachments) a.content = Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength);
      return read;
    },
    close: () => thread.close(),
  };
}
