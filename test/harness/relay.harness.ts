// A real SMTP server (smtp-server) standing in for the outbound relay: it records every message
// it accepts, parsed with mailparser, and can refuse recipients for good (5xx) or for now (4xx).
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { smtpRelay } from '../../mta/relay.smtp.ts';
import type { Transport } from '../../mta/transport.ts';
import { freePort } from './mx.harness.ts';

export type Verdict = 'accept' | 'reject' | 'defer';

export interface Received {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
  messageId: string;
}

export interface Relay {
  url: string;
  received: Received[];
  /** Decides each RCPT TO; accept by default. */
  verdict: (rcpt: string) => Verdict;
  byMessageId(): Map<string, number>;
  close(): Promise<void>;
}

export async function startRelay(port = 0): Promise<Relay> {
  const relay: Relay = {
    url: '',
    received: [],
    verdict: () => 'accept',
    byMessageId() {
      const counts = new Map<string, number>();
      for (const r of relay.received) counts.set(r.messageId, (counts.get(r.messageId) ?? 0) + 1);
      return counts;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // Close at once, even with a client's pooled connection open (the default waits 30 s).
    closeTimeout: 100,
    onRcptTo(address, _session, callback) {
      const v = relay.verdict(address.address);
      if (v === 'reject') return callback(Object.assign(new Error('5.1.1 No such user here'), { responseCode: 550 }));
      if (v === 'defer') return callback(Object.assign(new Error('4.2.0 Try again later'), { responseCode: 451 }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString();
        simpleParser(raw).then(
          (parsed) => {
            relay.received.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
              messageId: parsed.messageId ?? '',
            });
            callback(null, 'Queued');
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  // A client killed mid-session (the crash tests) resets its connection: that is no relay error.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') throw error;
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const address = (server as unknown as { server: { address(): AddressInfo } }).server.address();
  relay.url = `smtp://127.0.0.1:${address.port}`;
  return relay;
}

/** The relay transport to a loopback port nothing listens on: every live send fails for now (ECONNREFUSED). */
export async function unreachableRelay(): Promise<Transport> {
  return smtpRelay(`smtp://127.0.0.1:${await freePort()}`);
}
