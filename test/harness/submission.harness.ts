// Talking to Gatepost's SMTP submission as its users do: nodemailer over STARTTLS, trusting the
// self-signed certificate Gatepost generated (it prints where), and a raw SMTP dialog for what a
// client library does not let a test do (wait between RCPT TO and DATA).
import nodemailer from 'nodemailer';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { GatepostProcess } from './gatepost.harness.ts';

/** The certificate STARTTLS presents, from the line Gatepost prints at start. */
export function selfSignedCert(gp: GatepostProcess): Buffer {
  const m = /self-signed certificate, (\S+):/.exec(gp.output);
  if (!m) throw new Error(`Gatepost printed no self-signed certificate:\n${gp.output}`);
  return readFileSync(m[1]!);
}

/** A nodemailer transport to SMTP submission: STARTTLS required, the certificate trusted, the key as password. */
export function submission(gp: GatepostProcess, key: string, options: Record<string, unknown> = {}) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: gp.smtpPort,
    requireTLS: true,
    tls: { ca: selfSignedCert(gp) },
    auth: { user: 'app', pass: key },
    ...options,
  });
}

export interface Dialog {
  /** Sends a line (or, for DATA's content, several) and waits for nothing. */
  send(text: string): void;
  /** The server's next whole reply. */
  read(): Promise<string>;
  /** Sends a line and answers the reply to it. */
  say(text: string): Promise<string>;
  /** Every chunk read from the socket so far, as it arrived: how the server framed its replies. */
  readonly chunks: readonly string[];
  /** Settles once the connection has closed, whichever side closed it. */
  readonly closed: Promise<void>;
  close(): void;
}

/** A plain SMTP connection, one command at a time; answers once the greeting is read. */
export async function dialog(port: number, host = '127.0.0.1'): Promise<Dialog> {
  const socket = connect(port, host);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  // A connection the server resets ends like one it closes ('close' follows); unheard, the reset
  // would be an uncaught error of the test run (seen once in the SMTP fuzz test).
  socket.on('error', () => undefined);
  let buffer = '';
  let waiting: ((reply: string) => void) | null = null;
  const chunks: string[] = [];
  const deliver = () => {
    // A reply ends with a line whose code is followed by a space (RFC 5321 §4.2.1).
    const end = /^\d{3} .*\r\n/m.exec(buffer);
    if (!end || !waiting) return;
    const resolve = waiting;
    waiting = null;
    resolve(buffer.slice(0, end.index + end[0].length).trimEnd());
    buffer = buffer.slice(end.index + end[0].length);
  };
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk.toString());
    buffer += chunk.toString();
    deliver();
  });
  const next = () =>
    new Promise<string>((resolve) => {
      waiting = resolve;
      deliver();
    });
  await next();
  const send = (text: string) => void socket.write(`${text}\r\n`);
  return {
    send,
    read: next,
    say(text) {
      const reply = next();
      send(text);
      return reply;
    },
    chunks,
    closed,
    close: () => socket.destroy(),
  };
}
