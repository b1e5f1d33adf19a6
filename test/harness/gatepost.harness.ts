// Starts a real Gatepost process (node main.ts) on a fresh or given data directory, and talks
// to it over HTTP. Tests kill it (SIGKILL), drain it (SIGTERM) and restart it on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const ADMIN_TOKEN = 'test-admin-token';

export interface StartOptions {
  dataDir?: string;
  relayUrl?: string | null;
  env?: Record<string, string>;
}

export interface HttpAnswer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export class GatepostProcess {
  url = '';
  output = '';
  private child: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);

  constructor(
    readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {}

  async start(): Promise<void> {
    this.output = '';
    const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...this.env, PORT: '0', HOST: '127.0.0.1', GATEPOST_DATA_DIR: this.dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    this.url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        this.output += chunk.toString();
        const m = /Gatepost listening on (\S+)/.exec(this.output);
        if (m) resolve(m[1]!);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
      child.on('exit', (code) => reject(new Error(`Gatepost exited with ${code} before listening:\n${this.output}`)));
    });
  }

  /** SIGTERM: drain and exit; resolves with the exit code. */
  async stop(): Promise<number | null> {
    if (!this.child || this.child.exitCode !== null) return this.child?.exitCode ?? null;
    this.child.kill('SIGTERM');
    return this.exited;
  }

  /** SIGKILL: no drain, no flush; what is on disk is all that survives. */
  async kill(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

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
    return { id: t.body.id as string, live: await key('live'), sandbox: await key('sandbox'), publicKey: await key('public') };
  }
}

export function tempDir(name = 'gatepost'): string {
  return mkdtempSync(join(tmpdir(), `${name}-`));
}

export async function startGatepost(opts: StartOptions = {}): Promise<GatepostProcess> {
  const env: Record<string, string> = {
    GATEPOST_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEPOST_HOSTNAME: 'gatepost.test',
    GATEPOST_DELIVERY_RETRY: '1s,1s,1s',
    ...opts.env,
  };
  if (opts.relayUrl) env.GATEPOST_SMTP_RELAY = opts.relayUrl;
  const gp = new GatepostProcess(opts.dataDir ?? tempDir(), env);
  await gp.start();
  return gp;
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `ms`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 15_000,
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
    await new Promise((r) => setTimeout(r, 50));
  }
}
