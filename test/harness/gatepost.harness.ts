// Starts a real Gatepost process (node main.ts, or the build's dist/main.js) on a fresh or given
// data directory, and talks to it over HTTP. Tests kill it (SIGKILL), drain it (SIGTERM) and restart it on the same data.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { DaprCluster } from '../../dapr/cluster/cluster.ts';
import { LAUNCH_ENV, NODE_ARGS, V8_FLAGS } from '../../app/launch.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Which runtime the end-to-end tests start: `embedded` (default) or `dapr`. */
export const TEST_RUNTIME = process.env.GATEPOST_TEST_RUNTIME === 'dapr' ? 'dapr' : 'embedded';
export const ADMIN_TOKEN = 'test-admin-token-of-32-characters';

export interface StartOptions {
  dataDir?: string;
  relayUrl?: string | null;
  env?: Record<string, string>;
  /** Embedded only: run `npm run build`'s dist/main.js, as `npm start` and the image do, not the sources. */
  compiled?: boolean;
}

export interface HttpAnswer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** Talks to a running Gatepost over HTTP: the native API and, with the test token, the admin API. */
export class GatepostClient {
  /**
   * The public key of each tenant `tenant()` made, by the tenant's live key: a test that holds a
   * live key can send the same tenant's mail from a browser (which never takes a live key).
   */
  readonly publicKeyOf = new Map<string, string>();
  /** The live (full access) key of the tenant of a live or sandbox key: the one that manages its templates and webhooks. */
  readonly liveKeyOf = new Map<string, string>();

  constructor(public url = '') {}

  async request<T = any>(
    method: string,
    path: string,
    opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<HttpAnswer<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
    if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(this.url + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: body as T };
  }

  admin<T = any>(method: string, path: string, body?: unknown): Promise<HttpAnswer<T>> {
    return this.request<T>(method, `/v1/admin${path}`, { key: ADMIN_TOKEN, body });
  }

  /** A new tenant with a live and a sandbox key. */
  async tenant(opts: { quota?: { per_second?: number | null; per_day?: number | null }; default_from?: string } = {}) {
    const t = await this.admin('POST', '/tenants', {
      name: `t-${Math.random().toString(36).slice(2, 8)}`,
      default_from: 'Default Sender <default@sender.example>',
      ...opts,
    });
    if (t.status !== 201) throw new Error(`tenant: ${t.status} ${JSON.stringify(t.body)}`);
    const key = async (kind: string) => (await this.admin('POST', `/tenants/${t.body.id}/keys`, { kind })).body.key as string;
    const keys = {
      id: t.body.id as string,
      live: await key('live'),
      sandbox: await key('sandbox'),
      publicKey: await key('public'),
    };
    this.publicKeyOf.set(keys.live, keys.publicKey);
    this.liveKeyOf.set(keys.live, keys.live).set(keys.sandbox, keys.live);
    return keys;
  }
}

/** A started Gatepost as the tests see it: a base URL, and a life that can be ended and resumed. */
export abstract class GatepostProcess extends GatepostClient {
  /** What Gatepost printed since it last started (first-start keys, warnings, its JSON log), as it prints it. */
  get output(): string {
    return this.printed;
  }
  protected printed = '';
  /** The environment Gatepost is started with (besides the test process's own). */
  abstract readonly env: Record<string, string>;

  /** Changes the environment of the next start; takes effect on restart. */
  setEnv(changes: Record<string, string>): void {
    Object.assign(this.env, changes);
  }

  /** The SMTP submission port, from the line Gatepost prints when it starts. */
  get smtpPort(): number {
    const m = /SMTP submission listening on \S+:(\d+)/.exec(this.output);
    if (!m) throw new Error(`Gatepost printed no SMTP submission port:\n${this.output}`);
    return Number(m[1]);
  }

  /** The inbound MX port, from the line Gatepost prints when it starts. */
  get inboundPort(): number {
    const m = /Inbound MX listening on \S+:(\d+)/.exec(this.output);
    if (!m) throw new Error(`Gatepost printed no inbound MX port:\n${this.output}`);
    return Number(m[1]);
  }

  abstract start(): Promise<void>;
  /** SIGTERM: drain and exit; resolves with the exit code. */
  abstract stop(): Promise<number | null>;
  /** SIGKILL: no drain, no flush; what is durable is all that survives. */
  abstract kill(): Promise<void>;

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Ends everything this instance started, for good (the Dapr services and databases too). */
  async dispose(): Promise<void> {
    await this.stop();
  }

  /** Every row of a catalog table, as stored: to check what is, and is not, kept on disk. */
  abstract catalogRows(table: string): Promise<unknown[]>;
}

/** The embedded runtime: one `node main.ts` (or `node dist/main.js`) on a data directory. */
export class EmbeddedProcess extends GatepostProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);

  constructor(
    readonly dataDir: string,
    readonly env: Record<string, string>,
    private readonly compiled = false,
  ) {
    super();
  }

  async start(): Promise<void> {
    this.printed = '';
    const args = this.compiled ? [...V8_FLAGS, 'dist/main.js'] : [...NODE_ARGS, 'main.ts'];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, ...this.env, PORT: '0', HOST: '127.0.0.1', GATEPOST_DATA_DIR: this.dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    this.url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        this.printed += chunk.toString();
        const m = /Gatepost listening on (\S+)/.exec(this.output);
        if (m) resolve(m[1]!);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (chunk: Buffer) => (this.printed += chunk.toString()));
      child.on('exit', (code) => reject(new Error(`Gatepost exited with ${code} before listening:\n${this.output}`)));
    });
  }

  /** The running process's id (its resident memory is in /proc/<pid>/status). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async stop(): Promise<number | null> {
    if (!this.child || this.child.exitCode !== null) return this.child?.exitCode ?? null;
    this.child.kill('SIGTERM');
    return this.exited;
  }

  async kill(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async catalogRows(table: string): Promise<unknown[]> {
    const db = new Database(join(this.dataDir, 'catalog.db'), { readonly: true });
    try {
      return db.prepare(`SELECT * FROM ${table}`).all();
    } finally {
      db.close();
    }
  }
}

/**
 * The Dapr topology (GATEPOST_TEST_RUNTIME=dapr): placement, scheduler, an actor host and an
 * ingress, each app beside a real daprd, on a fresh PostgreSQL database and Redis database.
 * Stopping (SIGTERM) acts on the two Gatepost apps. Killing (SIGKILL) takes down what a crashed
 * pod would: both apps and both sidecars. Placement, scheduler, Redis and PostgreSQL stay up.
 */
class DaprProcess extends GatepostProcess {
  private cluster: DaprCluster | null = null;
  private databaseUrl = '';
  private redisDb: number | null = null;

  constructor(readonly env: Record<string, string>) {
    super();
  }

  async start(): Promise<void> {
    if (!this.cluster) {
      this.redisDb = await freshRedisDb();
      this.databaseUrl = await freshDatabase();
      this.cluster = await DaprCluster.start({
        databaseUrl: this.databaseUrl,
        redisDb: this.redisDb,
        // The same object: what setEnv changes reaches the apps the cluster restarts.
        env: this.env,
      });
    } else {
      // Whatever a stop or a kill took down, sidecars before their apps.
      for (const name of ['actors-daprd', 'actors', 'ingress-daprd', 'ingress']) {
        if (!this.cluster.running(name)) await this.cluster.restart(name);
      }
    }
    this.url = this.cluster.url;
  }

  /** On Dapr: what the ingress app printed since it last started (the actor host's output is in its log file). */
  override get output(): string {
    return this.cluster?.ingressOutput ?? '';
  }

  async stop(): Promise<number | null> {
    if (!this.cluster) return null;
    const code = await this.cluster.terminate('ingress');
    await this.cluster.terminate('actors');
    return code;
  }

  async kill(): Promise<void> {
    // All four signals in one tick, as a node failing takes its pods down.
    const cluster = this.cluster;
    if (cluster) await Promise.all(['actors', 'actors-daprd', 'ingress', 'ingress-daprd'].map((n) => cluster.kill(n)));
  }

  override async dispose(): Promise<void> {
    await this.cluster?.stop();
    this.cluster = null;
    if (this.redisDb !== null) releaseRedisDb(this.redisDb);
    if (this.databaseUrl) await dropDatabase(this.databaseUrl);
  }

  async catalogRows(table: string): Promise<unknown[]> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    await client.connect();
    try {
      return (await client.query(`SELECT * FROM ${table}`)).rows;
    } finally {
      await client.end();
    }
  }
}

/** A database of its own for one topology, so test files never see each other's catalog. */
export async function freshDatabase(): Promise<string> {
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `gatepost_e2e_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.end();
}

/** Redis databases held by this process's running topologies. */
const redisDbsHeld = new Set<number>();

/**
 * A Redis database number (1–15) that no running topology of this process holds, emptied, so
 * topologies side by side share no streams and no actor state. (Chosen at random before, two
 * topologies of one test file shared a database one time in fifteen, and one's actor host took
 * the other's deliveries.) Dapr test files run one at a time, so this process's topologies are
 * the only ones. Give it back with `releaseRedisDb` once the topology has stopped.
 */
export async function freshRedisDb(): Promise<number> {
  const free = Array.from({ length: 15 }, (_, i) => i + 1).filter((n) => !redisDbsHeld.has(n));
  if (free.length === 0) throw new Error('every Redis database (1-15) is held by a running topology');
  const db = free[Math.floor(Math.random() * free.length)]!;
  redisDbsHeld.add(db);
  execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', '6379', '-n', String(db), 'FLUSHDB']);
  return db;
}

export function releaseRedisDb(db: number): void {
  redisDbsHeld.delete(db);
}

export function tempDir(name = 'gatepost'): string {
  return mkdtempSync(join(tmpdir(), `${name}-`));
}

export async function startGatepost(opts: StartOptions = {}): Promise<GatepostProcess> {
  const env: Record<string, string> = {
    // As npm start runs it (app/launch.ts).
    ...LAUNCH_ENV,
    GATEPOST_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEPOST_HOSTNAME: 'gatepost.test',
    GATEPOST_DELIVERY_RETRY: '1s,1s,1s',
    GATEPOST_SMTP_PORT: '0',
    GATEPOST_INBOUND_PORT: '0',
    // Tests never ask the internet's DNS: without a DNS server of their own (dns.harness.ts),
    // look-ups go to a loopback port nothing answers on, so direct delivery defers at once.
    GATEPOST_DNS_SERVERS: '127.0.0.1:9',
    // A test that is not about warmup is not capped by it (warmup.e2e.test.ts turns it on).
    GATEPOST_WARMUP: 'false',
    ...opts.env,
  };
  if (opts.relayUrl) env.GATEPOST_SMTP_RELAY = opts.relayUrl;
  const gp = TEST_RUNTIME === 'dapr' ? new DaprProcess(env) : new EmbeddedProcess(opts.dataDir ?? tempDir(), env, opts.compiled);
  await gp.start();
  return gp;
}

/** Polls `check` every `intervalMs` until it returns a value other than undefined/false, or fails after `ms`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 15_000,
  intervalMs = 50,
): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > until) throw new Error(`not reached within ${ms} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
