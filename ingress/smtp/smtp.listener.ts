// What both SMTP listeners (submission, the inbound MX) do alike around their smtp-server: a
// connection error the peer caused is not logged as ours; `listen` says where it listens (port 0
// picks one); `drain` refuses new connections, waits for the messages under way to be answered
// (at most DRAIN_MS), then closes every session with 421.
import type { AddressInfo } from 'node:net';
import type { SMTPServer } from 'smtp-server';

/** How long a drain waits for messages under way before it closes their connections anyway. */
const DRAIN_MS = 30_000;

/** Errors of a client that dropped its connection: no failure of ours. */
const PEER_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNECTION']);

export interface SmtpListener {
  listen(port: number, host: string): Promise<{ host: string; port: number }>;
  /** Stops accepting connections, answers every message under way, then closes every session. */
  drain(): Promise<void>;
}

/** The messages a listener is answering (from DATA to its reply), which a drain waits for. */
export class MessagesUnderWay {
  private count = 0;

  /** Counts a message as under way until `answered` settles. */
  track(answered: Promise<unknown>): void {
    this.count++;
    const done = () => void this.count--;
    answered.then(done, done);
  }

  get size(): number {
    return this.count;
  }
}

export function smtpListener(
  server: SMTPServer,
  underWay: MessagesUnderWay,
  opts: { name: string; log: (message: string, error?: unknown) => void },
): SmtpListener {
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (!PEER_GONE.has(error.code ?? '')) opts.log(`${opts.name} connection failed`, error);
  });
  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.server.once('error', reject);
        server.listen(port, host, () => {
          server.server.off('error', reject);
          const address = server.server.address() as AddressInfo;
          resolve({ host: address.address, port: address.port });
        });
      });
    },

    async drain() {
      if (!server.server.listening) return;
      // New connections are refused from here; a command on an idle session is answered 421.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const deadline = Date.now() + DRAIN_MS;
      while (underWay.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const connection of server.connections) {
        connection.send(421, '4.3.2 Gatepost is shutting down; try again shortly.');
        connection.close();
      }
      await closed;
    },
  };
}
