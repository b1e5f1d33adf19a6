// The Dapr topology on one machine, loopback only: placement, scheduler, actor-host apps and
// ingress apps (one of each by default), each app beside its own daprd. Used by `npm run start:dapr` and by the tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { daprBinDir } from '../build/bin-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ClusterOptions {
  databaseUrl: string;
  /** Redis host:port for actor state and pub/sub. */
  redisHost?: string;
  /** Redis database number, so clusters running side by side (tests) do not share streams. */
  redisDb?: number;
  /** Extra environment for both Gatepost apps (admin token, relay, retry schedule). */
  env?: Record<string, string>;
  /** The first ingress's HTTP port; 0 (or none) picks a free one. */
  port?: number;
  /** Where logs, etcd data and component files go; a temp directory by default. */
  workDir?: string;
  /** How many actor-host replicas (each with its own daprd); they share the actors through placement. */
  actorHosts?: number;
  /** How many ingress replicas (each with its own daprd, on an HTTP port of its own: `urls`). */
  ingresses?: number;
  /**
   * Sidecars for apps the caller runs itself (tests running a DaprRuntime in their own process):
   * for each name, a daprd with app id `gatepost-<name>` and ports `<name>App`, `<name>Http`…
   * The cluster launches it and does not wait for its app.
   */
  sidecars?: string[];
  /** Log level of daprd, placement and scheduler (GATEPOST_DAPR_LOG_LEVEL, else `warn`); `debug` to trace placement. */
  logLevel?: string;
  /**
   * What runs each app: node's arguments up to its entry point. By default the sources through
   * tsx (`--import tsx main.ts`); a benchmark gives the build as `npm start` and the image run it
   * (its V8 flags and `dist/main.js`, built first), since what it measures must be what an operator runs.
   */
  appArgs?: string[];
}

/** Member and port-name prefix of each actor host: `actors`, `actors2`, `actors3`… */
const actorHosts = (count = 1) => Array.from({ length: count }, (_, i) => (i === 0 ? 'actors' : `actors${i + 1}`));
/** Member and port-name prefix of each ingress: `ingress`, `ingress2`… */
const ingresses = (count = 1) => Array.from({ length: count }, (_, i) => (i === 0 ? 'ingress' : `ingress${i + 1}`));

interface Member {
  name: string;
  args: () => [string, string[], Record<string, string>];
  child?: ChildProcess;
  exited?: Promise<void>;
}

/** A TCP port on loopback that was free a moment ago (another process may take it before it is bound). */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/**
 * `n` distinct free ports: each is held until all are found, since the system may hand a port
 * just closed to the next caller (a topology once got one port for the scheduler's etcd peer and
 * for an actor host's app, and the app could not listen).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
          }),
      ),
    );
  } finally {
    await Promise.all(
      servers.map((server) => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined)))),
    );
  }
}

/** Polls `check` until it holds; fails at once when `gone` names a process that has exited. */
async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  ms = 60_000,
  gone: () => string | undefined = () => undefined,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    const dead = gone();
    if (dead) throw new Error(`${what}: ${dead} exited`);
    if (Date.now() > until) throw new Error(`${what} did not come up within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How often start() tries again when a process could not bind the free port it was given. */
const START_ATTEMPTS = 3;

const answers = (url: string) => async () => (await fetch(url)).status < 300;

export class DaprCluster {
  /** Each ingress app's base URL, by member name. */
  private readonly urls = new Map<string, string>();
  /** What each ingress app printed since it last started (first-start keys), by member name. */
  private readonly outputs = new Map<string, string>();
  readonly workDir: string;
  private readonly members = new Map<string, Member>();

  /** The (first) ingress app's base URL. */
  get url(): string {
    return this.urls.get('ingress') ?? '';
  }

  /** Every ingress app's base URL, the first first. */
  get ingressUrls(): string[] {
    return ingresses(this.opts.ingresses).map((name) => this.urls.get(name)!);
  }

  /** What the (first) ingress app printed since it last started. */
  get ingressOutput(): string {
    return this.outputs.get('ingress') ?? '';
  }

  private constructor(
    private readonly bin: string,
    private readonly opts: ClusterOptions,
    readonly ports: Record<string, number>,
  ) {
    this.workDir = opts.workDir ?? mkdtempSync(join(tmpdir(), 'gatepost-dapr-'));
  }

  static async start(opts: ClusterOptions): Promise<DaprCluster> {
    const bin = await daprBinDir();
    const names = ['placement', 'placementHealth', 'placementRaft', 'scheduler', 'schedulerHealth', 'etcdClient', 'etcdPeer'];
    const hosts = actorHosts(opts.actorHosts);
    const ingressNames = ingresses(opts.ingresses);
    for (const prefix of [...hosts, ...ingressNames, ...(opts.sidecars ?? [])]) {
      names.push(`${prefix}App`, `${prefix}Http`, `${prefix}Grpc`, `${prefix}Internal`, `${prefix}Public`);
    }
    for (const prefix of ingressNames) names.push(`${prefix}Api`);
    // A port found free may be taken by another process before daprd binds it (other topologies
    // start on the same machine), and a member may exit while starting for no reason it logs (a CI
    // run saw the scheduler exit after its second log line): then the whole topology starts again
    // on new ports. A member that fails every time fails the third attempt with its own error.
    for (let attempt = 1; ; attempt++) {
      const free = await freePorts(names.length);
      const ports = Object.fromEntries(names.map((n, i) => [n, free[i]!]));
      const workDir = attempt === 1 || !opts.workDir ? opts.workDir : join(opts.workDir, `attempt-${attempt}`);
      const cluster = new DaprCluster(bin, { ...opts, workDir }, ports);
      try {
        await cluster.boot();
        return cluster;
      } catch (error) {
        // Before stop(), which ends every member.
        const exited = cluster.exitedMembers();
        await cluster.stop();
        if (attempt === START_ATTEMPTS || exited.length === 0) throw error;
        console.error(`[dapr cluster] ${exited.join(', ')} while starting (${(error as Error).message}); starting again`);
      }
    }
  }

  /** Each member that exited, with its exit code or signal and whether its log says its port was taken. */
  private exitedMembers(): string[] {
    return [...this.members.values()].flatMap(({ name, child }) => {
      if (!child || (child.exitCode === null && child.signalCode === null)) return [];
      const log = join(this.workDir, `${name}.log`);
      const portTaken = existsSync(log) && readFileSync(log, 'utf8').includes('address already in use');
      return [`${name} exited (${child.signalCode ?? `code ${child.exitCode}`}${portTaken ? ', its port was taken' : ''})`];
    });
  }

  /** The first of `names` that was launched and has exited since. */
  private exited(...names: string[]): string | undefined {
    return names.find((n) => this.members.get(n)?.child !== undefined && !this.running(n));
  }

  private components(): string {
    const dir = join(this.workDir, 'components');
    mkdirSync(dir, { recursive: true });
    for (const file of ['statestore.yaml', 'pubsub.yaml', 'resiliency.yaml']) {
      let text = readFileSync(join(ROOT, 'components', file), 'utf8');
      text = text.replace('127.0.0.1:6379', this.opts.redisHost ?? '127.0.0.1:6379');
      if (this.opts.redisDb !== undefined) {
        text = text.replace('  metadata:\n', `  metadata:\n    - name: redisDB\n      value: "${this.opts.redisDb}"\n`);
      }
      writeFileSync(join(dir, file), text);
    }
    return dir;
  }

  private async boot(): Promise<void> {
    const p = this.ports;
    const components = this.components();
    const logLevel = this.opts.logLevel ?? process.env.GATEPOST_DAPR_LOG_LEVEL ?? 'warn';
    const loopback = ['--enable-metrics=false', '--log-level', logLevel];
    const sidecar = (appId: string, role: string, appPort: number | null): string[] => [
      '--app-id',
      appId,
      '--mode',
      'standalone',
      '--dapr-listen-addresses',
      '127.0.0.1',
      '--dapr-http-port',
      String(p[`${role}Http`]),
      '--dapr-grpc-port',
      String(p[`${role}Grpc`]),
      '--dapr-internal-grpc-listen-address',
      '127.0.0.1',
      '--dapr-internal-grpc-port',
      String(p[`${role}Internal`]),
      '--dapr-public-listen-address',
      '127.0.0.1',
      '--dapr-public-port',
      String(p[`${role}Public`]),
      '--resources-path',
      components,
      '--placement-host-address',
      `127.0.0.1:${p.placement}`,
      '--scheduler-host-address',
      `127.0.0.1:${p.scheduler}`,
      ...(appPort === null ? [] : ['--app-port', String(appPort), '--app-channel-address', '127.0.0.1']),
      ...loopback,
    ];
    // Chosen before anything starts, so that every app knows the API's URL.
    const apiPort = (prefix: string) => (prefix === 'ingress' && this.opts.port) || p[`${prefix}Api`]!;
    const ingressPort = apiPort('ingress');
    const app = (role: 'actors' | 'ingress', prefix: string): [string, string[], Record<string, string>] => [
      process.execPath,
      this.opts.appArgs ?? ['--import', 'tsx', 'main.ts'],
      {
        // Each app's own files (the SMTP ingress's self-signed certificate) stay in the work
        // directory, not in the repository's ./data that every topology would share.
        GATEPOST_DATA_DIR: join(this.workDir, `${prefix}-data`),
        // Where people reach the API, for the links of mail an actor host admits (a broadcast's);
        // the ingress knows its own address (and, without one given, names DNS records by its host name).
        ...(role === 'actors' ? { GATEPOST_PUBLIC_URL: `http://127.0.0.1:${ingressPort}` } : {}),
        ...this.opts.env,
        GATEPOST_RUNTIME: 'dapr',
        GATEPOST_ROLE: role,
        DATABASE_URL: this.opts.databaseUrl,
        DAPR_HTTP_PORT: String(p[`${prefix}Http`]),
        DAPR_GRPC_PORT: String(p[`${prefix}Grpc`]),
        APP_PORT: String(p[`${prefix}App`]),
        // The ingress's HTTP API; an actor host serves its metrics on a free port (it prints which).
        PORT: role === 'ingress' ? String(apiPort(prefix)) : '0',
        HOST: '127.0.0.1',
      },
    ];
    this.add('placement', () => [
      join(this.bin, 'placement'),
      [
        '--listen-address',
        '127.0.0.1',
        '--port',
        String(p.placement),
        '--healthz-listen-address',
        '127.0.0.1',
        '--healthz-port',
        String(p.placementHealth),
        '--initial-cluster',
        `dapr-placement-0=127.0.0.1:${p.placementRaft}`,
        ...loopback,
      ],
      {},
    ]);
    this.add('scheduler', () => [
      join(this.bin, 'scheduler'),
      [
        '--listen-address',
        '127.0.0.1',
        '--port',
        String(p.scheduler),
        '--override-broadcast-host-port',
        `127.0.0.1:${p.scheduler}`,
        '--healthz-listen-address',
        '127.0.0.1',
        '--healthz-port',
        String(p.schedulerHealth),
        '--etcd-data-dir',
        join(this.workDir, 'etcd'),
        '--etcd-client-listen-address',
        '127.0.0.1',
        '--etcd-client-port',
        String(p.etcdClient),
        '--etcd-initial-cluster',
        `dapr-scheduler-server-0=http://127.0.0.1:${p.etcdPeer}`,
        ...loopback,
      ],
      {},
    ]);
    const hosts = actorHosts(this.opts.actorHosts);
    for (const h of hosts) {
      // Replicas share one app id, as pods of one Deployment do.
      this.add(`${h}-daprd`, () => [join(this.bin, 'daprd'), sidecar('gatepost-actors', h, p[`${h}App`]!), {}]);
      this.add(h, () => app('actors', h));
    }
    // Sidecars for apps the caller runs in its own process (no app of ours beside them).
    const callerSidecars = this.opts.sidecars ?? [];
    for (const name of callerSidecars) {
      this.add(`${name}-daprd`, () => [join(this.bin, 'daprd'), sidecar(`gatepost-${name}`, name, p[`${name}App`]!), {}]);
    }
    const ingressNames = ingresses(this.opts.ingresses);
    for (const i of ingressNames) {
      this.add(`${i}-daprd`, () => [join(this.bin, 'daprd'), sidecar('gatepost-ingress', i, null), {}]);
      this.add(i, () => app('ingress', i));
    }

    this.launch('placement');
    this.launch('scheduler');
    const control = () => this.exited('placement', 'scheduler');
    await waitFor('placement', answers(`http://127.0.0.1:${p.placementHealth}/healthz`), undefined, control);
    await waitFor('scheduler', answers(`http://127.0.0.1:${p.schedulerHealth}/healthz`), undefined, control);
    for (const h of hosts) {
      this.launch(`${h}-daprd`);
      this.launch(h);
    }
    for (const name of callerSidecars) this.launch(`${name}-daprd`);
    for (const i of ingressNames) this.launch(`${i}-daprd`);
    for (const h of hosts) await this.hostAndAppReady(h);
    // A sidecar for the caller's own app answers its outbound health once its components are
    // loaded, before that app listens: waited for here, so one that could not bind its port
    // starts the topology again instead of leaving the caller's app waiting on a dead sidecar.
    for (const name of callerSidecars) {
      await waitFor(`${name} sidecar`, answers(`http://127.0.0.1:${p[`${name}Http`]}/v1.0/healthz/outbound`), undefined, () =>
        this.exited(`${name}-daprd`),
      );
    }
    // A port taken by another process answers for a member that could not bind it and exited
    // (a healthz port, or an app port daprd found open): found here, whichever member it was,
    // and the topology starts again on new ports.
    const dead = this.exited(...this.members.keys());
    if (dead) throw new Error(`${dead} exited while the topology started; see ${this.workDir}/${dead}.log`);
    for (const i of ingressNames) await this.startIngress(i);
  }

  private async startIngress(name: string): Promise<void> {
    const log = this.launch(name);
    this.outputs.set(name, '');
    const url = await new Promise<string>((resolve, reject) => {
      log.stdout!.on('data', (chunk: Buffer) => {
        const output = this.outputs.get(name)! + chunk.toString();
        this.outputs.set(name, output);
        const m = /Gatepost listening on (\S+)/.exec(output);
        if (m) resolve(m[1]!);
      });
      log.once('exit', (code) => reject(new Error(`the ${name} app exited with ${code}; see ${this.workDir}/${name}.log`)));
      // Without its sidecar the app would wait a minute for it before giving up.
      this.members
        .get(`${name}-daprd`)
        ?.exited?.then(() => reject(new Error(`${name}-daprd exited; see ${this.workDir}/${name}-daprd.log`)));
    });
    this.urls.set(name, url);
  }

  private add(name: string, args: Member['args']): void {
    this.members.set(name, { name, args });
  }

  /** Children die with this process, however it ends (a test runner killing a worker, say). */
  private static readonly running = new Set<ChildProcess>();
  static {
    process.once('exit', () => {
      for (const child of DaprCluster.running) child.kill('SIGKILL');
    });
  }

  private launch(name: string): ChildProcess {
    const m = this.members.get(name)!;
    const [command, args, env] = m.args();
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = createWriteStream(join(this.workDir, `${name}.log`), { flags: 'a' });
    // Two streams into one file: the first to end must not end the file while the other still
    // writes ("write after end", seen in CI); the file ends once both have closed.
    child.stdout!.pipe(out, { end: false });
    child.stderr!.pipe(out, { end: false });
    child.once('close', () => out.end());
    m.child = child;
    DaprCluster.running.add(child);
    m.exited = new Promise((resolve) =>
      child.once('exit', () => {
        DaprCluster.running.delete(child);
        resolve();
      }),
    );
    return child;
  }

  /** Waits until the actor host's sidecar has registered its actor types with placement. */
  async actorHostReady(host = 'actors'): Promise<void> {
    await waitFor(
      `actor host ${host}`,
      async () => {
        const res = await fetch(`http://127.0.0.1:${this.ports[`${host}Http`]}/v1.0/metadata`);
        const meta = (await res.json()) as { actorRuntime?: { hostReady?: boolean; placement?: string } };
        return meta.actorRuntime?.hostReady === true && /connected/.test(meta.actorRuntime.placement ?? '');
      },
      60_000,
      () => this.exited(`${host}-daprd`, host),
    );
  }

  /** The last lines a member logged, to put in an error its log explains. */
  logTail(name: string, lines = 20): string {
    const log = join(this.workDir, `${name}.log`);
    if (!existsSync(log)) return `${name} wrote no log`;
    return [`${name}.log ends:`, ...readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines)].join('\n');
  }

  /** SIGKILL one member (crash tests). */
  async kill(name: string): Promise<void> {
    const m = this.members.get(name)!;
    m.child?.kill('SIGKILL');
    await m.exited;
  }

  /** The process id of each running member, by name (for CPU and memory figures). */
  pids(): Record<string, number> {
    return Object.fromEntries(
      [...this.members.keys()].filter((n) => this.running(n)).map((n) => [n, this.members.get(n)!.child!.pid!]),
    );
  }

  /** Whether the member's process is running (launched and not exited). */
  running(name: string): boolean {
    const child = this.members.get(name)?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /**
   * Starts a killed or stopped member again, with the same ports and data. A sidecar is only
   * launched; an actor host is waited for until its sidecar (which must be running) is ready.
   */
  async restart(name: string): Promise<void> {
    if (ingresses(this.opts.ingresses).includes(name)) return this.startIngress(name);
    this.launch(name);
    if (!this.members.has(`${name}-daprd`)) return;
    await this.hostAndAppReady(name);
  }

  /**
   * The actor host's app answers on its own port, and its sidecar is ready. The sidecar alone is
   * not enough: one that stayed up may still report the host ready from before the app stopped,
   * and one whose app port another process holds reports it ready while the app exits.
   */
  private async hostAndAppReady(name: string): Promise<void> {
    await waitFor(`actor host ${name} app`, answers(`http://127.0.0.1:${this.ports[`${name}App`]}/healthz`), 60_000, () =>
      this.exited(name),
    );
    await this.actorHostReady(name);
  }

  /** SIGTERM one member and wait for it; its exit code (null if it was not running). */
  async terminate(name: string): Promise<number | null> {
    const m = this.members.get(name)!;
    if (!m.child) return null;
    if (m.child.exitCode === null && m.child.signalCode === null) {
      m.child.kill('SIGTERM');
      const timer = setTimeout(() => m.child!.kill('SIGKILL'), 15_000);
      await m.exited;
      clearTimeout(timer);
    }
    return m.child.exitCode;
  }

  /** SIGTERM every member, apps first, and waits for them. */
  async stop(): Promise<void> {
    const apps = [...this.members.keys()].filter((n) => !n.endsWith('-daprd') && n !== 'placement' && n !== 'scheduler');
    const sidecars = [...this.members.keys()].filter((n) => n.endsWith('-daprd'));
    for (const name of [...apps, ...sidecars, 'scheduler', 'placement']) await this.terminate(name);
  }
}
