// Connections to one destination (an MX host), reused from one message to the next and capped,
// as KumoMTA limits connections per site: a message finds an idle connection, opens one while
// under the cap, or waits its turn. A connection that failed is never handed out again. A pool
// that has stood idle (no connection in use, nobody waiting) for its idle time closes its
// connections and says so, and its owner drops it: the pools of hosts mailed once do not pile up.
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type { TLSSocket } from 'node:tls';

export interface MxConnection {
  smtp: SMTPConnection;
  host: string;
  ip: string;
  tls: { version: string; cipher: string } | null;
  connected_at: string;
  /** Set once the connection errs or closes: it is dropped, not reused. */
  dead: boolean;
}

/** How long to wait for a host to connect, to greet, and to answer each command or the data. */
export interface MxTimeouts {
  connectMs: number;
  greetingMs: number;
  commandMs: number;
}

export interface ConnectOptions {
  port: number;
  /** The name EHLO gives (GATEPOST_HOSTNAME). */
  hostname: string;
  timeouts: MxTimeouts;
  /** The local address to connect from (GATEPOST_SOURCE_IPS); none: the host's route. */
  localAddress?: string | undefined;
}

/** Opens an SMTP session to `ip` (the MX `host`'s address): greeting, EHLO, and STARTTLS when offered. */
export function connect(host: string, ip: string, opts: ConnectOptions): Promise<MxConnection> {
  const smtp = new SMTPConnection({
    host: ip,
    port: opts.port,
    ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
    name: opts.hostname,
    servername: host,
    // Opportunistic TLS, as Postfix's `may`: encrypt when offered, whoever signed the certificate
    // (MX certificates are rarely verifiable, RFC 7672 §1.3), and carry on in plain text if the upgrade fails.
    opportunisticTLS: true,
    tls: { rejectUnauthorized: false },
    connectionTimeout: opts.timeouts.connectMs,
    greetingTimeout: opts.timeouts.greetingMs,
    socketTimeout: opts.timeouts.commandMs,
    logger: false,
  });
  const conn: MxConnection = { smtp, host, ip, tls: null, connected_at: '', dead: false };
  return new Promise((resolve, reject) => {
    // Always listened to: an idle connection timing out or reset must not be an unhandled 'error'.
    smtp.on('error', (error) => {
      conn.dead = true;
      reject(error);
    });
    smtp.on('end', () => {
      conn.dead = true;
      reject(new Error(`${host} [${ip}] closed the connection`));
    });
    smtp.connect(() => {
      const socket = smtp._socket as TLSSocket;
      if (smtp.secure && typeof socket.getProtocol === 'function') {
        conn.tls = { version: socket.getProtocol() ?? 'unknown', cipher: socket.getCipher().name };
      }
      conn.connected_at = new Date().toISOString();
      resolve(conn);
    });
  });
}

/** How long a destination's pool may stand idle before it is closed and dropped, unless set otherwise. */
export const POOL_IDLE_MS = 60_000;

export class DestinationPool {
  private readonly idle: MxConnection[] = [];
  private open = 0;
  private readonly waiting: (() => void)[] = [];
  private idleTimer: NodeJS.Timeout | null = null;

  /** `retire.onIdle` is told once the pool has stood idle for `retire.idleMs` and closed its connections. */
  constructor(
    private readonly max: number,
    private readonly retire: { idleMs: number; onIdle: () => void },
  ) {}

  /** An idle connection, or a new one from `open` once the cap allows; a failed `open` frees its slot. */
  async acquire(open: () => Promise<MxConnection>): Promise<MxConnection> {
    this.stopIdleTimer();
    for (;;) {
      const reused = this.takeIdle();
      if (reused) return reused;
      if (this.open < this.max) break;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.open++;
    try {
      return await open();
    } catch (error) {
      this.free();
      this.startIdleTimer(); // a host that cannot be reached leaves no pool behind either
      throw error;
    }
  }

  /** Gives a connection back: kept for the next message when `reusable`, closed otherwise. */
  release(conn: MxConnection, reusable: boolean): void {
    if (reusable && !conn.dead) {
      this.idle.push(conn);
      this.waiting.shift()?.();
    } else {
      conn.dead = true;
      conn.smtp.close();
      this.free();
    }
    this.startIdleTimer();
  }

  close(): void {
    this.stopIdleTimer();
    for (const conn of this.idle.splice(0)) {
      conn.dead = true;
      conn.smtp.quit();
    }
  }

  /** Nothing in use and nobody waiting: every open connection is idle. */
  private get unused(): boolean {
    return this.open === this.idle.length && this.waiting.length === 0;
  }

  /** Starts the idle clock once the pool is unused; acquiring stops it. It keeps no process alive. */
  private startIdleTimer(): void {
    if (this.idleTimer || !this.unused) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (!this.unused) return;
      this.close();
      this.retire.onIdle();
    }, this.retire.idleMs);
    this.idleTimer.unref();
  }

  private stopIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private takeIdle(): MxConnection | undefined {
    for (let conn = this.idle.pop(); conn; conn = this.idle.pop()) {
      if (!conn.dead) return conn;
      this.free(); // closed while idle (timeout, the host hung up)
    }
    return undefined;
  }

  private free(): void {
    this.open--;
    this.waiting.shift()?.();
  }
}
