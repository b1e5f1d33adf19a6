// The inbound reader's thread (inbound.reader.ts): each received message's verdicts and parse,
// answered by id, with DNS answers kept between messages.
import { workerData } from 'node:worker_threads';
import { dnsResolver, keptRecords } from '../../lib/dns.ts';
import { serveJobs } from '../../lib/thread.ts';
import { readInbound, type Read, type ReadJob } from './inbound.reader.ts';

const lookups = dnsResolver((workerData as { dnsServers: string[] | null }).dnsServers);
const resolver = keptRecords((name, type) => lookups.resolve(name, type) as Promise<string[] | string[][]>);

serveJobs<ReadJob, Read>(({ raw, connection }) =>
  readInbound(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), connection, resolver),
);
