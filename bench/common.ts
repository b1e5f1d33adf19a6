// Shared by the bench scripts: child servers (started, awaited, always stopped), Gatepost on a
// fresh data directory with a sandbox tenant, resident memory, and percentiles.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAUNCH_ENV, V8_FLAGS } from '../app/launch.ts';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Child {
  name: string;
  url: string;
  pid: number;
  /** The last 64 KiB the child printed. */
  output(): string;
  /** SIGTERM, then SIGKILL after 30 s; resolves once it has exited. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
const dataDirs = new Set<string>();
// Whatever way the bench ends, no child outlives it and no data directory stays behind.
process.on('exit', () => {
  running.forEach((c) => c.kill('SIGKILL'));
  dataDirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

/** Starts `node args` (a TypeScript entry through tsx, unless `compiled`) and waits for its "listening on" line. */
export async function startChild(
  name: string,
  args: string[],
  env: Record<string, string> = {},
  opts: { compiled?: boolean } = {},
): Promise<Child> {
  const proc = spawn(process.execPath, [...(opts.compiled ? [] : ['--import', 'tsx']), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  // The child's last output, kept as it comes (under load, a line a request) and joined only when
  // asked for: copying and searching a 64 KiB tail at every chunk cost this process, which shares
  // the machine with the server measured, more than the server's own writing of its log.
  const tail = new OutputTail(65_536);
  const exited = new Promise<void>((resolve) => proc.on('exit', () => (running.delete(proc), resolve())));
  proc.stderr!.on('data', (chunk: Buffer) => tail.push(chunk));
  const url = await new Promise<string>((resolve, reject) => {
    let line = '';
    const listening = (chunk: Buffer) => {
      tail.push(chunk);
      line = (line + chunk.toString()).slice(-4096);
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (!m) return;
      proc.stdout!.off('data', listening).on('data', (more: Buffer) => tail.push(more));
      resolve(m[1]!);
    };
    proc.stdout!.on('data', listening);
    proc.on('exit', (code) => reject(new Error(`${name} exited with ${code} before listening:\n${tail.text()}`)));
  });
  return {
    name,
    url,
    pid: proc.pid!,
    output: () => tail.text(),
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const kill = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(kill);
    },
  };
}

/** The last `max` bytes or so of a stream, kept as the chunks that came. */
class OutputTail {
  private chunks: Buffer[] = [];
  private bytes = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.chunks.length > 1 && this.bytes - this.chunks[0]!.length >= this.max) this.bytes -= this.chunks.shift()!.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString().slice(-this.max);
  }
}

export interface Answer<T = any> {
  status: number;
  body: T;
}

export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  bearer: string,
  body?: unknown,
): Promise<Answer<T>> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** A fresh tenant and its sandbox key, made through the admin API of the Gatepost at `url`. */
async function sandboxTenant(url: string, adminToken: string): Promise<{ tenantId: string; key: string }> {
  const tenant = await call(url, 'POST', '/v1/admin/tenants', adminToken, {
    name: 'bench',
    default_from: 'bench@sender.example',
  });
  if (tenant.status !== 201) throw new Error(`creating the tenant: ${tenant.status} ${JSON.stringify(tenant.body)}`);
  const key = await call(url, 'POST', `/v1/admin/tenants/${tenant.body.id}/keys`, adminToken, { kind: 'sandbox' });
  if (key.status !== 201) throw new Error(`creating the key: ${key.status} ${JSON.stringify(key.body)}`);
  return { tenantId: tenant.body.id as string, key: key.body.key as string };
}

/** Node arguments that write a CPU profile (node --cpu-prof) into `dir`; none without one. */
export const profileArgs = (dir: string | undefined): string[] => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);

export interface BenchGatepost extends Child {
  /** A sandbox key of a fresh tenant: messages run the whole pipeline and are captured, not sent. */
  key: string;
  /** The tenant of `key`, and the admin token that made it (for a live key of the same tenant). */
  tenantId: string;
  adminToken: string;
  /** Embedded only: the data directory (its catalog.db, actors.db). */
  dataDir?: string;
  /** Stops the process and removes its data directory. */
  stop(): Promise<void>;
}

let building: Promise<void> | null = null;
/** `npm run build` once a benchmark: dist/ from the sources as they are. */
function built(): Promise<void> {
  building ??= new Promise<void>((resolve, reject) => {
    const proc = spawn('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    proc.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm run build exited with ${code}`))));
  });
  return building;
}

export async function startGatepost(extraNodeArgs: string[] = [], env: Record<string, string> = {}): Promise<BenchGatepost> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatepost-bench-'));
  dataDirs.add(dataDir);
  const removeData = () => (rmSync(dataDir, { recursive: true, force: true }), dataDirs.delete(dataDir));
  const adminToken = randomBytes(16).toString('hex');
  // As `npm start` starts it (app/launch.ts): the build, with no TypeScript loader. Run through
  // tsx instead, an idle Gatepost was 363 MiB resident, not 231 (the loader's compiled sources
  // and caches), which a benchmark of the memory users see must not count.
  await built();
  const child = await startChild(
    'Gatepost',
    [...V8_FLAGS, ...extraNodeArgs, 'dist/main.js'],
    {
      ...LAUNCH_ENV,
      PORT: '0',
      HOST: '127.0.0.1',
      GATEPOST_DATA_DIR: dataDir,
      GATEPOST_ADMIN_TOKEN: adminToken,
      GATEPOST_SMTP_PORT: '0',
      GATEPOST_INBOUND_PORT: '0',
      // A benchmark measures delivery, not a new domain's warmup caps.
      GATEPOST_WARMUP: 'false',
      ...env,
    },
    { compiled: true },
  );
  try {
    return {
      ...child,
      ...(await sandboxTenant(child.url, adminToken)),
      adminToken,
      dataDir,
      async stop() {
        await child.stop();
        removeData();
      },
    };
  } catch (error) {
    await child.stop();
    removeData();
    throw error;
  }
}

/**
 * Gatepost on the Dapr topology (dapr/cluster): placement, scheduler, actor hosts and ingresses
 * (one of each by default), each app beside its daprd, on a fresh PostgreSQL database and Redis
 * database. `url` and `pid` are the first ingress's, `urls` every ingress's; `pids` are every
 * process of the topology, by member name. `nodeArgs` go to every app's Node (a CPU profile each).
 */
export async function startGatepostDapr(
  topology: { actorHosts?: number; ingresses?: number } = {},
  nodeArgs: string[] = [],
): Promise<BenchGatepost & { urls: string[]; pids: () => Record<string, number>; workDir: string }> {
  const { DaprCluster } = await import('../dapr/cluster/cluster.ts');
  const { freshDatabase, freshRedisDb, releaseRedisDb, dropDatabase } = await import('../test/harness/gatepost.harness.ts');
  const adminToken = randomBytes(16).toString('hex');
  const databaseUrl = await freshDatabase();
  const redisDb = await freshRedisDb();
  await built();
  const cluster = await DaprCluster.start({
    databaseUrl,
    redisDb,
    ...topology,
    // As the image runs each app (the Dockerfile's CMD): the build, not the sources through tsx.
    appArgs: [...V8_FLAGS, ...nodeArgs, 'dist/main.js'],
    env: {
      ...LAUNCH_ENV,
      GATEPOST_ADMIN_TOKEN: adminToken,
      GATEPOST_SMTP_PORT: '0',
      GATEPOST_INBOUND_PORT: '0',
      GATEPOST_WARMUP: 'false',
    },
  });
  const stop = async () => {
    await cluster.stop();
    releaseRedisDb(redisDb);
    await dropDatabase(databaseUrl);
  };
  try {
    const tenant = await sandboxTenant(cluster.url, adminToken);
    return {
      name: 'Gatepost on Dapr',
      url: cluster.url,
      urls: cluster.ingressUrls,
      pid: cluster.pids().ingress!,
      pids: () => cluster.pids(),
      workDir: cluster.workDir,
      output: () => cluster.ingressOutput,
      ...tenant,
      adminToken,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The request body of send `n` (a number, or any text that makes the address unique). */
export function sendBody(n: number | string): Record<string, unknown> {
  return {
    to: `user${n}@example.com`,
    subject: 'Hello {{name}}',
    html: '<p>Hi {{name}}, your code is {{code}}</p>',
    data: { name: 'Ann', code: '1234' },
  };
}

/** Every message id in the tenant's sandbox inbox, paged 1000 at a time. */
export async function capturedIds(gp: BenchGatepost): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const page: Answer<{ data: { message_id: string }[]; next_cursor: string | null }> = await call(
      gp.url,
      'GET',
      `/v1/sandbox/messages?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      gp.key,
    );
    if (page.status !== 200) throw new Error(`listing captures: ${page.status} ${JSON.stringify(page.body)}`);
    for (const c of page.body.data) ids.add(c.message_id);
    cursor = page.body.next_cursor;
  } while (cursor);
  return ids;
}

/** The inbox's ids, read again every 2 s until `done` holds of them or `deadline` (ms since epoch) has passed. */
export async function capturedUntil(
  gp: BenchGatepost,
  done: (ids: Set<string>) => boolean,
  deadline: number,
): Promise<Set<string>> {
  let ids = await capturedIds(gp);
  while (!done(ids) && Date.now() < deadline) {
    await sleep(2000);
    ids = await capturedIds(gp);
  }
  return ids;
}

/**
 * Streams a generated contacts CSV of `rows` rows (`person<i>@example.com`, a name and a plan) into
 * an audience over HTTP as it is made, never whole in memory; answers the import's report.
 */
export async function importGeneratedContacts(
  url: string,
  key: string,
  audienceId: string,
  rows: number,
): Promise<{ status: number; report: { added: number } & Record<string, unknown> }> {
  function* csv() {
    yield 'email,name,plan\n';
    for (let i = 0; i < rows; i += 1000) {
      let chunk = '';
      for (let j = i; j < Math.min(rows, i + 1000); j++) chunk += `person${j}@example.com,Person ${j},plan${j % 3}\n`;
      yield chunk;
    }
  }
  const source = csv();
  const encoder = new TextEncoder();
  const res = await fetch(`${url}/v1/audiences/${audienceId}/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
    body: new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = source.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
    }),
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, report: (await res.json()) as { added: number } };
}

/** Resident memory of a process in MiB: VmRSS of /proc/<pid>/status, or VmHWM for its peak so far. */
export function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/** The p-th percentile (0..100) of ascending `sorted`, nearest rank. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The median of the numbers (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Runs every one of `runs` once a round, `rounds` times, every other round in the reverse order:
 * the machine's speed drifts, even within minutes, and no run should always come first or last.
 * Answers each round's results in the order of `runs`.
 */
export async function inTurns<T>(rounds: number, runs: (() => T | Promise<T>)[]): Promise<T[][]> {
  const results: T[][] = [];
  for (let round = 0; round < rounds; round++) {
    const order = runs.map((_, i) => (round % 2 === 0 ? i : runs.length - 1 - i));
    const measured: T[] = [];
    for (const i of order) measured[i] = await runs[i]!();
    results.push(measured);
  }
  return results;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '–';

/** A plain-text table with right-aligned columns after the first. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// CPU accounting, to tell a clean measurement from one that shared the machine with other work.
const HZ = 100; // USER_HZ of /proc/stat and /proc/<pid>/stat on Linux

function machineBusyTicks(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0); // user nice system idle iowait irq softirq steal
  return total - f[3]! - f[4]!;
}

/** A process's CPU ticks; with `children`, those of its children that exited and were waited for. */
function processTicks(pid: number, children = false): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and
    // 13th, the waited-for children's cutime and cstime the 14th and 15th.
    const rest = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return children ? Number(rest[13]) + Number(rest[14]) : Number(rest[11]) + Number(rest[12]);
  } catch {
    return 0; // exited
  }
}

export interface CpuSnapshot {
  at: number;
  machine: number;
  servers: number;
  self: NodeJS.CpuUsage;
  /** Ticks of this process's children that exited (a load generator run as a child, such as wrk). */
  children: number;
  pids: number[];
}

export function cpuSnapshot(serverPids: number[]): CpuSnapshot {
  return {
    at: performance.now(),
    machine: machineBusyTicks(),
    servers: serverPids.reduce((sum, pid) => sum + processTicks(pid), 0),
    self: process.cpuUsage(),
    children: processTicks(process.pid, true),
    pids: serverPids,
  };
}

/**
 * CPU used since `s`, in % of one core: by the server processes, by the load generator (this
 * process, and its children that exited since, such as a wrk run), and by everything else.
 */
export function cpuSince(s: CpuSnapshot): { server: number; loadgen: number; other: number } {
  const seconds = (performance.now() - s.at) / 1000;
  const pct = (ticks: number) => (100 * ticks) / HZ / seconds;
  const server = pct(s.pids.reduce((sum, pid) => sum + processTicks(pid), 0) - s.servers);
  const self = process.cpuUsage(s.self);
  const loadgen = (100 * (self.user + self.system)) / 1e6 / seconds + pct(processTicks(process.pid, true) - s.children);
  const machine = pct(machineBusyTicks() - s.machine);
  return { server, loadgen, other: Math.max(0, machine - server - loadgen) };
}

/** The commit Gatepost runs from, and how many files outside bench/ differ from it. */
export function gatepostRevision(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((line) => line && !line.slice(3).startsWith('bench/') && !/package(-lock)?\.json$/.test(line)).length;
    return changed ? `${head} (+ ${changed} uncommitted files outside bench/)` : head;
  } catch {
    return 'unknown';
  }
}

/**
 * Waits (up to `maxMs`) for the machine to be quiet: under `limit`% of one core busy over a second
 * while nothing of ours is running. Returns the last busy figure, so a run can say it shared the machine.
 */
export async function waitForQuiet(limit = 15, maxMs = 60_000): Promise<number> {
  const until = Date.now() + maxMs;
  for (;;) {
    const s = cpuSnapshot([]);
    await sleep(1000);
    const busy = cpuSince(s).other;
    if (busy < limit || Date.now() > until) return busy;
  }
}
