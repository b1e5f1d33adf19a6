// MX hosts on loopback for direct delivery: every host listens on the same port (direct delivery
// reaches all MX hosts on GATEPOST_MX_PORT) at an address of its own in 127.0.0.0/8, which the
// loopback DNS server (dns.harness.ts) names. Well-behaved hosts are smtp-server instances that
// answer each RCPT TO as their `verdict` says, with STARTTLS on a self-signed certificate when
// asked; the misbehaving ones (stall, close mid-DATA, garbage) are scripted sockets.
import { createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { selfSignedCertificate } from './receiver.harness.ts';

/** An RCPT TO answer: accept, or refuse with a reply code and text (e.g. 550, '5.1.1 No such user'). */
export type MxVerdict = 'accept' | { code: number; text: string };

export interface MxReceived {
  from: string;
  to: string[];
  raw: string;
  /** The message's bytes as they came after DATA (without the dot-stuffing and the final dot). */
  bytes: Buffer;
  parsed: ParsedMail;
  /** The cipher the message came over (null: plain text), and the name the client gave in EHLO. */
  cipher: string | null;
  ehlo: string;
  /** The address the client connected from, and when the message was taken (ms since epoch). */
  remoteAddress: string;
  at: number;
}

export interface MxHost {
  ip: string;
  received: MxReceived[];
  /** Decides each RCPT TO; the test may change it at any time. */
  verdict: (rcpt: string) => MxVerdict;
  /** Decides each MAIL FROM, and the end of each message's data (after which it is kept only if accepted). */
  mailVerdict: (from: string) => MxVerdict;
  dataVerdict: () => MxVerdict;
  /** Connections the host has taken, and those that have ended since. */
  connections: number;
  closed: number;
  /** Messages whose data has begun to arrive. */
  dataStarted: number;
  /** While set, the end of each message's data is answered only once it resolves (a host slow to take mail). */
  hold: Promise<void> | null;
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1, to use for every MX host of a test. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startMx(
  ip: string,
  port: number,
  opts: {
    starttls?: boolean;
    verdict?: MxHost['verdict'];
    mailVerdict?: MxHost['mailVerdict'];
    dataVerdict?: MxHost['dataVerdict'];
  } = {},
): Promise<MxHost> {
  const cert = opts.starttls ? await selfSignedCertificate(['mx.test']) : null;
  const host: MxHost = {
    ip,
    received: [],
    verdict: opts.verdict ?? (() => 'accept'),
    mailVerdict: opts.mailVerdict ?? (() => 'accept'),
    dataVerdict: opts.dataVerdict ?? (() => 'accept'),
    connections: 0,
    closed: 0,
    dataStarted: 0,
    hold: null,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    closeTimeout: 100,
    ...(cert ? { key: cert.key, cert: cert.cert } : { disabledCommands: ['STARTTLS'] }),
    onConnect(_session, callback) {
      host.connections++;
      callback();
    },
    onClose() {
      host.closed++;
    },
    onMailFrom(address, _session, callback) {
      answer(host.mailVerdict(address.address), callback);
    },
    onRcptTo(address, _session, callback) {
      answer(host.verdict(address.address), callback);
    },
    onData(stream, session, callback) {
      host.dataStarted++;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        await host.hold;
        const refusal = host.dataVerdict();
        if (refusal !== 'accept') return answer(refusal, callback);
        const bytes = Buffer.concat(chunks);
        const raw = bytes.toString();
        simpleParser(raw).then((parsed) => {
          // smtp-server keeps the socket's getCipher() of a secured session as its tlsOptions.
          const { secure, tlsOptions } = session as unknown as { secure: boolean; tlsOptions: { name: string } | false };
          host.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            bytes,
            parsed,
            cipher: secure && tlsOptions ? tlsOptions.name : null,
            ehlo: session.hostNameAppearsAs,
            remoteAddress: session.remoteAddress,
            at: Date.now(),
          });
          callback(null, 'Queued as q1');
        }, callback);
      });
    },
  });
  server.on('error', () => {}); // a client that hangs up mid-session is no failure of the host
  await new Promise<void>((resolve) => server.listen(port, ip, () => resolve()));
  return host;
}

function answer(v: MxVerdict, callback: (error?: Error | null) => void): void {
  if (v === 'accept') return callback();
  callback(Object.assign(new Error(v.text), { responseCode: v.code }));
}

/** How a scripted host misbehaves. */
export type Misbehaviour =
  /** Greets, takes the envelope, then never answers the end of the data. */
  | 'stall'
  /** Greets, takes the envelope and DATA, and closes the connection on the first bytes of the message. */
  | 'close-mid-data'
  /** Answers the connection with something that is not SMTP. */
  | 'garbage';

export interface ScriptedHost {
  ip: string;
  connections: number;
  close(): Promise<void>;
}

export async function startMisbehavingMx(ip: string, port: number, how: Misbehaviour): Promise<ScriptedHost> {
  const sockets = new Set<Socket>();
  const host: ScriptedHost = {
    ip,
    connections: 0,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((socket) => {
    host.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (how === 'garbage') return void socket.write('HELLO? what is this\r\n');
    socket.write('220 mx.test ESMTP\r\n');
    let inData = false;
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      if (inData) {
        if (how === 'close-mid-data') socket.destroy();
        return; // 'stall': the data is taken, its end never answered
      }
      buffered += chunk.toString();
      for (let at = buffered.indexOf('\r\n'); at >= 0; at = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, at).toUpperCase();
        buffered = buffered.slice(at + 2);
        if (line.startsWith('EHLO')) socket.write('250-mx.test\r\n250 8BITMIME\r\n');
        else if (line.startsWith('DATA')) {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (line.startsWith('QUIT')) socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, ip, () => resolve()));
  return host;
}
