// The operator contract: every setting Gatepost reads from its environment, with its default.
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseKey } from '../lib/sealed.ts';
import { DEFAULT_RENDER_LIMITS, type RenderLimits } from '../mail/render.limits.ts';

/** The shortest GATEPOST_ADMIN_TOKEN accepted: 32 characters (`openssl rand -hex 16`). */
export const MIN_ADMIN_TOKEN = 32;

/** How long the HTTP server waits on a client before it closes the connection. */
export interface HttpLimits {
  /** From a connection's first byte to the end of a request's headers (GATEPOST_HTTP_HEADERS_TIMEOUT). */
  headersTimeoutMs: number;
  /** For a whole request to arrive, and for a silent connection (GATEPOST_HTTP_REQUEST_TIMEOUT). */
  requestTimeoutMs: number;
  /** A keep-alive connection with no request under way (GATEPOST_HTTP_IDLE_TIMEOUT). */
  idleTimeoutMs: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, idleTimeoutMs: 5_000 };

/** pino's levels, and `silent`, which writes nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function logLevelOf(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'info';
  const level = LOG_LEVELS.find((l) => l === value);
  if (!level) throw new Error(`GATEPOST_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (it is "${value}")`);
  return level;
}

function adminTokenOf(value: string | undefined): string | null {
  if (!value) return null;
  if (value.length < MIN_ADMIN_TOKEN) {
    throw new Error(
      `GATEPOST_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN} characters (it has ${value.length}): make one with "openssl rand -hex 16"`,
    );
  }
  return value;
}

function publicUrlOf(value: string | undefined): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`GATEPOST_PUBLIC_URL must be a URL like https://mail.example.com (it is "${value}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('GATEPOST_PUBLIC_URL must be an http or https URL');
  if (url.search || url.hash) throw new Error('GATEPOST_PUBLIC_URL must have no query or fragment');
  return url.href.replace(/\/+$/, '');
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  runtime: 'embedded' | 'dapr';
  /**
   * Which parts this process runs: `all` (the HTTP API and the actors), `ingress` (the HTTP API
   * only: stateless, it calls actors through Dapr) or `actors` (hosts actors and subscriptions).
   * The embedded runtime always runs all.
   */
  role: 'all' | 'ingress' | 'actors';
  /** Dapr: the sidecar's HTTP and gRPC ports, and the port this app serves Dapr's callbacks on. */
  daprHttpPort: number;
  daprGrpcPort: number;
  appPort: number;
  pubsub: string;
  databaseUrl: string | null;
  /** Enables the admin API; at least MIN_ADMIN_TOKEN characters, so it cannot be guessed. */
  adminToken: string | null;
  /** GET /metrics asks for `Authorization: Bearer <token>` when set; null: it answers anyone. */
  metricsToken: string | null;
  /** GATEPOST_METRICS: false counts nothing and serves no GET /metrics (docs/metrics.md#cost). */
  metrics: boolean;
  /** The lowest level of log line written (GATEPOST_LOG_LEVEL); `info` writes a line per request. */
  logLevel: LogLevel;
  http: HttpLimits;
  smtpRelay: string | null;
  /**
   * Live mail only from a tenant's verified sending domains: always with direct delivery (no
   * relay); with a relay, as GATEPOST_REQUIRE_VERIFIED_DOMAIN says (default false).
   */
  requireVerifiedDomain: boolean;
  /** What a sending domain's SPF record must authorise (GATEPOST_SPF_INCLUDE, else GATEPOST_SENDING_IPS, else `a:<hostname>`). */
  spf: { include: string | null; ips: string[] };
  /** SMTP submission (roles that serve the API): where it listens; port 0 picks a free port. */
  smtpPort: number;
  smtpHost: string;
  /**
   * PEM files of the certificate STARTTLS presents; null: a self-signed one for development,
   * generated at start and kept in the data directory.
   */
  smtpTls: { cert: string; key: string } | null;
  /** What SMTP submission allows a client: connections, idleness and failed AUTH. */
  smtpLimits: SmtpLimits;
  /** The inbound MX (roles that serve the API): where it listens (port 0 picks a free port), and the largest message it takes. */
  inboundPort: number;
  inboundHost: string;
  inboundMaxBytes: number;
  /** PEM files of the certificate the inbound MX's STARTTLS presents; null: submission's (smtpTls or the generated one). */
  inboundTls: { cert: string; key: string } | null;
  /** What one template render may cost: output, {{#each}} iterations, time (GATEPOST_RENDER_*). */
  render: RenderLimits;
  /**
   * The base URL people reach Gatepost at (GATEPOST_PUBLIC_URL), without a trailing slash: open
   * pixels, tracked links and unsubscribe pages point under it. Null: the HTTP API's own address,
   * once it listens.
   */
  publicUrl: string | null;
  /** The host name Gatepost names itself by (Message-ID fallback, greetings). */
  hostname: string;
  /** Waits between delivery attempts after a transient failure, in ms. */
  deliveryRetrySchedule: number[];
  /**
   * How long after its creation a message may keep being retried, ms: a transient failure past
   * it soft-bounces, and no retry is set later than it (GATEPOST_DELIVERY_HORIZON, default 72 h).
   */
  deliveryHorizonMs: number;
  /** Direct delivery (no relay): the port MX hosts are reached on (25; tests use loopback ports). */
  mxPort: number;
  /** Direct delivery: connections open at once to one MX host, each reused for the next message. */
  mxMaxConnections: number;
  /** Direct delivery: waits for an MX host to connect, to greet, and to answer each command or the data. */
  mxTimeouts: MxTimeouts;
  /** DNS servers (`ip` or `ip:port`) for Gatepost's own look-ups (webhook hosts); null: the system resolver. */
  dnsServers: string[] | null;
  /** Networks (CIDRs) webhooks may reach despite the SSRF guard, plain http included: for development and tests. */
  webhookAllow: string[];
  /** Waits between webhook attempts, in ms: attempts = waits + 1, at most 15. */
  webhookRetrySchedule: number[];
  /** One webhook attempt's deadline, ms. */
  webhookTimeoutMs: number;
  /** A webhook endpoint failing with no success this long is disabled, ms. */
  webhookDisableAfterMs: number;
  /**
   * Keys that seal secrets at rest (lib/sealed.ts): `current` seals, `old` still open what they
   * sealed. Null: secrets are stored as they are.
   */
  encryption: { current: Buffer; old: Buffer[] } | null;
  /** The reputation breaker (GATEPOST_BREAKER_*, docs/deliverability.md); rates as fractions. */
  breaker: BreakerConfig;
  /** A new sending domain's warmup (GATEPOST_WARMUP*, docs/deliverability.md). */
  warmup: WarmupConfig;
  /**
   * The local addresses direct delivery connects from (GATEPOST_SOURCE_IPS), each warming up on
   * its own ramp; empty: whatever address the host routes through.
   */
  sourceIps: string[];
}

export interface WarmupConfig {
  enabled: boolean;
  startPerDay: number;
  growth: number;
  fullPerDay: number;
  dayMs: number;
  windowMs: number;
  broadcastShare: number;
  providerShare: number;
  idleMs: number;
}

export interface BreakerConfig {
  windowMs: number;
  minSample: number;
  bounceWarn: number;
  bounceOpen: number;
  complaintWarn: number;
  complaintOpen: number;
  blockWarn: number;
  blockOpen: number;
  cooldownMs: number;
  trickleMs: number;
}

export interface MxTimeouts {
  connectMs: number;
  greetingMs: number;
  /** Silence allowed while a command or the message data waits for its answer. */
  commandMs: number;
}

export interface SmtpLimits {
  /** Connections at once; one more is answered 421 and closed. */
  maxClients: number;
  /** A connection that owes a command this long is answered 421 and closed, ms. */
  idleTimeoutMs: number;
  /** Failed AUTH a connection may have: the last of them is answered 421 and closes it. */
  authFailuresPerSession: number;
  /** Failed AUTH from one address (an IPv6 /64) within `authFailureWindowMs`, after which its connections are refused until the window ends. */
  authFailuresPerAddress: number;
  authFailureWindowMs: number;
}

// About four days of waits, as MTAs keep a deferred message (Postfix: 5 days); the horizon
// (GATEPOST_DELIVERY_HORIZON, 72 h) ends the retries first.
const DEFAULT_RETRY_SCHEDULE = '1m,5m,15m,30m,1h,2h,4h,8h,16h,24h,24h';

// 15 attempts over about three days (69.9 h before jitter of ±20% per wait), as spec part 8 allows.
const DEFAULT_WEBHOOK_RETRY = '5s,1m,5m,15m,30m,1h,2h,4h,6h,8h,10h,12h,12h,14h';
const DEFAULT_WEBHOOK_TIMEOUT = '15s';
const DEFAULT_WEBHOOK_DISABLE_AFTER = '5d';

const list = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDurations(name: string, text: string): number[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+(?:\.\d+)?)(ms|s|m|h|d)\s*$/.exec(part);
    if (!m) throw new Error(`${name}: "${part}" is not a duration like 30s, 5m or 2h`);
    return Number(m[1]) * UNITS[m[2]!]!;
  });
}

function oneDuration(name: string, text: string): number {
  const [ms, ...more] = parseDurations(name, text);
  if (more.length > 0) throw new Error(`${name}: one duration, not a list`);
  return ms!;
}

function booleanOf(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new Error(`${name} must be true or false, not ${value}`);
}

/** A certificate and its key as PEM file paths, `<prefix>_CERT` and `<prefix>_KEY`: both or neither. */
function pemPair(env: NodeJS.ProcessEnv, prefix: string): { cert: string; key: string } | null {
  const cert = env[`${prefix}_CERT`];
  const key = env[`${prefix}_KEY`];
  if (!cert !== !key) throw new Error(`${prefix}_CERT and ${prefix}_KEY go together: set both or neither`);
  return cert && key ? { cert: resolve(cert), key: resolve(key) } : null;
}

function countOf(name: string, value: string | undefined, fallback: number): number {
  const count = Number(value ?? fallback);
  if (!Number.isInteger(count) || count < 1) throw new Error(`${name} must be a whole number of at least 1, not ${value}`);
  return count;
}

function portOf(name: string, value: string | undefined, fallback: number): number {
  const port = Number(value ?? fallback);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name} must be a port number, not ${value}`);
  return port;
}

/** A timeout: a duration (30s), never zero (it would wait for ever). */
function limit(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = oneDuration(name, value);
  if (ms <= 0) throw new Error(`${name} must be a duration above zero, not ${value}`);
  return ms;
}

/** A percentage (4, 0.08) above 0 and at most 100, as a fraction. */
function percentOf(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback / 100;
  const p = Number(value.replace(/\s*%$/, ''));
  if (value.trim() === '' || !Number.isFinite(p) || p <= 0 || p > 100) {
    throw new Error(`${name} must be a percentage above 0 and at most 100 (4 or 0.1), not ${value}`);
  }
  return p / 100;
}

/** A rate's warning and opening thresholds: the warning comes first. */
function thresholds(env: NodeJS.ProcessEnv, rate: string, warn: number, open: number): [number, number] {
  const w = percentOf(`GATEPOST_BREAKER_${rate}_WARN`, env[`GATEPOST_BREAKER_${rate}_WARN`], warn);
  const o = percentOf(`GATEPOST_BREAKER_${rate}_OPEN`, env[`GATEPOST_BREAKER_${rate}_OPEN`], open);
  if (w > o) throw new Error(`GATEPOST_BREAKER_${rate}_WARN must not be above GATEPOST_BREAKER_${rate}_OPEN`);
  return [w, o];
}

// Below what mailbox providers enforce: SES reviews an account at 5 % bounces or 0.1 % complaints
// and may pause it at 10 % or 0.5 %; Gmail wants spam under 0.3 %.
function breakerOf(env: NodeJS.ProcessEnv): BreakerConfig {
  const [bounceWarn, bounceOpen] = thresholds(env, 'BOUNCE', 4, 8);
  const [complaintWarn, complaintOpen] = thresholds(env, 'COMPLAINT', 0.08, 0.3);
  const [blockWarn, blockOpen] = thresholds(env, 'BLOCK', 2, 5);
  return {
    windowMs: limit('GATEPOST_BREAKER_WINDOW', env.GATEPOST_BREAKER_WINDOW, 24 * UNITS.h!),
    minSample: countOf('GATEPOST_BREAKER_MIN_SAMPLE', env.GATEPOST_BREAKER_MIN_SAMPLE, 100),
    bounceWarn,
    bounceOpen,
    complaintWarn,
    complaintOpen,
    blockWarn,
    blockOpen,
    cooldownMs: limit('GATEPOST_BREAKER_COOLDOWN', env.GATEPOST_BREAKER_COOLDOWN, UNITS.h!),
    trickleMs: limit('GATEPOST_BREAKER_TRICKLE', env.GATEPOST_BREAKER_TRICKLE, UNITS.m!),
  };
}

/** A growth factor: a number above 1 (1.4), so each day's cap is above the day before's. */
function growthOf(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const g = Number(value);
  if (value.trim() === '' || !Number.isFinite(g) || g <= 1 || g > 10) {
    throw new Error(`${name} must be a factor above 1 and at most 10 (1.4), not ${value}`);
  }
  return g;
}

// SendGrid-style: about 50 a day on day 1, ×1.4 a day, an hour's cap the day's shared over its
// hours; warm at 100,000 a day (day 24). On by default where Gatepost delivers to MX hosts itself
// (a new IP and domain is what mailbox providers throttle); off behind a relay, whose operator
// warms its own addresses.
function warmupOf(env: NodeJS.ProcessEnv): WarmupConfig {
  const dayMs = limit('GATEPOST_WARMUP_DAY', env.GATEPOST_WARMUP_DAY, 24 * UNITS.h!);
  const windowMs = limit('GATEPOST_WARMUP_WINDOW', env.GATEPOST_WARMUP_WINDOW, UNITS.h!);
  if (windowMs > dayMs) throw new Error('GATEPOST_WARMUP_WINDOW must not be longer than GATEPOST_WARMUP_DAY');
  const startPerDay = countOf('GATEPOST_WARMUP_START', env.GATEPOST_WARMUP_START, 50);
  const fullPerDay = countOf('GATEPOST_WARMUP_FULL', env.GATEPOST_WARMUP_FULL, 100_000);
  if (fullPerDay < startPerDay) throw new Error('GATEPOST_WARMUP_FULL must not be below GATEPOST_WARMUP_START');
  return {
    enabled: booleanOf('GATEPOST_WARMUP', env.GATEPOST_WARMUP, !env.GATEPOST_SMTP_RELAY),
    startPerDay,
    growth: growthOf('GATEPOST_WARMUP_GROWTH', env.GATEPOST_WARMUP_GROWTH, 1.4),
    fullPerDay,
    dayMs,
    windowMs,
    broadcastShare: percentOf('GATEPOST_WARMUP_BROADCAST_SHARE', env.GATEPOST_WARMUP_BROADCAST_SHARE, 80),
    // A day's cap is not spent on one mailbox provider: each may take half of it (at least one).
    providerShare: percentOf('GATEPOST_WARMUP_PROVIDER_SHARE', env.GATEPOST_WARMUP_PROVIDER_SHARE, 50),
    idleMs: limit('GATEPOST_WARMUP_IDLE', env.GATEPOST_WARMUP_IDLE, 30 * UNITS.d!),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const runtime = env.GATEPOST_RUNTIME ?? 'embedded';
  if (runtime !== 'embedded' && runtime !== 'dapr') throw new Error(`GATEPOST_RUNTIME must be embedded or dapr, not ${runtime}`);
  const port = portOf('PORT', env.PORT, 3000);
  const role = env.GATEPOST_ROLE ?? 'all';
  if (role !== 'all' && role !== 'ingress' && role !== 'actors') {
    throw new Error(`GATEPOST_ROLE must be all, ingress or actors, not ${role}`);
  }
  if (runtime === 'embedded' && role !== 'all') throw new Error('GATEPOST_ROLE needs GATEPOST_RUNTIME=dapr');
  if (runtime === 'dapr' && !env.DATABASE_URL) throw new Error('GATEPOST_RUNTIME=dapr needs DATABASE_URL (PostgreSQL)');
  const webhookRetrySchedule = parseDurations('GATEPOST_WEBHOOK_RETRY', env.GATEPOST_WEBHOOK_RETRY ?? DEFAULT_WEBHOOK_RETRY);
  if (webhookRetrySchedule.length > 14) throw new Error('GATEPOST_WEBHOOK_RETRY: at most 14 waits (15 attempts in all)');
  const smtpTls = pemPair(env, 'GATEPOST_SMTP_TLS');
  const inboundTls = pemPair(env, 'GATEPOST_INBOUND_TLS');
  const host = env.HOST ?? '0.0.0.0';
  const dnsServers = list(env.GATEPOST_DNS_SERVERS);
  const oldKeys = list(env.GATEPOST_ENCRYPTION_KEYS_OLD).map((k) => parseKey('GATEPOST_ENCRYPTION_KEYS_OLD', k));
  if (oldKeys.length > 0 && !env.GATEPOST_ENCRYPTION_KEY) {
    throw new Error('GATEPOST_ENCRYPTION_KEYS_OLD needs GATEPOST_ENCRYPTION_KEY: the key new secrets are sealed with');
  }
  return {
    port,
    host,
    dataDir: resolve(env.GATEPOST_DATA_DIR ?? './data'),
    runtime,
    role,
    daprHttpPort: portOf('DAPR_HTTP_PORT', env.DAPR_HTTP_PORT, 3500),
    daprGrpcPort: portOf('DAPR_GRPC_PORT', env.DAPR_GRPC_PORT, 50001),
    appPort: portOf('APP_PORT', env.APP_PORT, 3001),
    pubsub: env.GATEPOST_PUBSUB ?? 'pubsub',
    databaseUrl: env.DATABASE_URL || null,
    adminToken: adminTokenOf(env.GATEPOST_ADMIN_TOKEN),
    metricsToken: env.GATEPOST_METRICS_TOKEN || null,
    metrics: booleanOf('GATEPOST_METRICS', env.GATEPOST_METRICS, true),
    logLevel: logLevelOf(env.GATEPOST_LOG_LEVEL),
    http: {
      headersTimeoutMs: limit(
        'GATEPOST_HTTP_HEADERS_TIMEOUT',
        env.GATEPOST_HTTP_HEADERS_TIMEOUT,
        DEFAULT_HTTP_LIMITS.headersTimeoutMs,
      ),
      requestTimeoutMs: limit(
        'GATEPOST_HTTP_REQUEST_TIMEOUT',
        env.GATEPOST_HTTP_REQUEST_TIMEOUT,
        DEFAULT_HTTP_LIMITS.requestTimeoutMs,
      ),
      idleTimeoutMs: limit('GATEPOST_HTTP_IDLE_TIMEOUT', env.GATEPOST_HTTP_IDLE_TIMEOUT, DEFAULT_HTTP_LIMITS.idleTimeoutMs),
    },
    smtpRelay: env.GATEPOST_SMTP_RELAY || null,
    requireVerifiedDomain:
      !env.GATEPOST_SMTP_RELAY || booleanOf('GATEPOST_REQUIRE_VERIFIED_DOMAIN', env.GATEPOST_REQUIRE_VERIFIED_DOMAIN, false),
    spf: { include: env.GATEPOST_SPF_INCLUDE || null, ips: list(env.GATEPOST_SENDING_IPS) },
    smtpPort: portOf('GATEPOST_SMTP_PORT', env.GATEPOST_SMTP_PORT, 2587),
    smtpHost: env.GATEPOST_SMTP_HOST ?? host,
    smtpTls,
    inboundPort: portOf('GATEPOST_INBOUND_PORT', env.GATEPOST_INBOUND_PORT, 2525),
    inboundHost: env.GATEPOST_INBOUND_HOST ?? host,
    inboundMaxBytes: countOf('GATEPOST_INBOUND_MAX_BYTES', env.GATEPOST_INBOUND_MAX_BYTES, 25 * 1024 * 1024),
    inboundTls,
    smtpLimits: {
      maxClients: countOf('GATEPOST_SMTP_MAX_CLIENTS', env.GATEPOST_SMTP_MAX_CLIENTS, 100),
      idleTimeoutMs: oneDuration('GATEPOST_SMTP_IDLE_TIMEOUT', env.GATEPOST_SMTP_IDLE_TIMEOUT ?? '30s'),
      authFailuresPerSession: countOf('GATEPOST_SMTP_AUTH_FAILURES', env.GATEPOST_SMTP_AUTH_FAILURES, 3),
      authFailuresPerAddress: countOf('GATEPOST_SMTP_AUTH_FAILURES_PER_ADDRESS', env.GATEPOST_SMTP_AUTH_FAILURES_PER_ADDRESS, 20),
      authFailureWindowMs: oneDuration('GATEPOST_SMTP_AUTH_FAILURE_WINDOW', env.GATEPOST_SMTP_AUTH_FAILURE_WINDOW ?? '15m'),
    },
    render: {
      maxOutputBytes: countOf(
        'GATEPOST_RENDER_MAX_OUTPUT_BYTES',
        env.GATEPOST_RENDER_MAX_OUTPUT_BYTES,
        DEFAULT_RENDER_LIMITS.maxOutputBytes,
      ),
      maxIterations: countOf(
        'GATEPOST_RENDER_MAX_ITERATIONS',
        env.GATEPOST_RENDER_MAX_ITERATIONS,
        DEFAULT_RENDER_LIMITS.maxIterations,
      ),
      timeoutMs: countOf('GATEPOST_RENDER_TIMEOUT_MS', env.GATEPOST_RENDER_TIMEOUT_MS, DEFAULT_RENDER_LIMITS.timeoutMs),
    },
    publicUrl: publicUrlOf(env.GATEPOST_PUBLIC_URL),
    hostname: env.GATEPOST_HOSTNAME ?? hostname(),
    deliveryRetrySchedule: parseDurations('GATEPOST_DELIVERY_RETRY', env.GATEPOST_DELIVERY_RETRY ?? DEFAULT_RETRY_SCHEDULE),
    deliveryHorizonMs: limit('GATEPOST_DELIVERY_HORIZON', env.GATEPOST_DELIVERY_HORIZON, 72 * UNITS.h!),
    mxPort: portOf('GATEPOST_MX_PORT', env.GATEPOST_MX_PORT, 25),
    mxMaxConnections: countOf('GATEPOST_MX_MAX_CONNECTIONS', env.GATEPOST_MX_MAX_CONNECTIONS, 5),
    // RFC 5321 §4.5.3.2 asks for minutes (5 for the greeting and MAIL, 10 for the data's end);
    // shorter waits defer a stalling host sooner, and the retry schedule tries it again.
    mxTimeouts: {
      connectMs: limit('GATEPOST_MX_CONNECT_TIMEOUT', env.GATEPOST_MX_CONNECT_TIMEOUT, 30_000),
      greetingMs: limit('GATEPOST_MX_GREETING_TIMEOUT', env.GATEPOST_MX_GREETING_TIMEOUT, 60_000),
      commandMs: limit('GATEPOST_MX_COMMAND_TIMEOUT', env.GATEPOST_MX_COMMAND_TIMEOUT, 120_000),
    },
    dnsServers: dnsServers.length > 0 ? dnsServers : null,
    webhookAllow: list(env.GATEPOST_WEBHOOK_ALLOW),
    webhookRetrySchedule,
    webhookTimeoutMs: oneDuration('GATEPOST_WEBHOOK_TIMEOUT', env.GATEPOST_WEBHOOK_TIMEOUT ?? DEFAULT_WEBHOOK_TIMEOUT),
    webhookDisableAfterMs: oneDuration(
      'GATEPOST_WEBHOOK_DISABLE_AFTER',
      env.GATEPOST_WEBHOOK_DISABLE_AFTER ?? DEFAULT_WEBHOOK_DISABLE_AFTER,
    ),
    encryption: env.GATEPOST_ENCRYPTION_KEY
      ? { current: parseKey('GATEPOST_ENCRYPTION_KEY', env.GATEPOST_ENCRYPTION_KEY), old: oldKeys }
      : null,
    breaker: breakerOf(env),
    warmup: warmupOf(env),
    sourceIps: sourceIpsOf(env),
  };
}

/**
 * GATEPOST_SOURCE_IPS: IP addresses, comma-separated, each once. Only direct delivery connects
 * from them: behind a relay it is the relay that connects to the MX hosts. Whether each is an
 * address of this machine is checked at start (mta/source.ips.ts), where the actors run.
 */
function sourceIpsOf(env: NodeJS.ProcessEnv): string[] {
  const ips = list(env.GATEPOST_SOURCE_IPS);
  for (const ip of ips) if (isIP(ip) === 0) throw new Error(`GATEPOST_SOURCE_IPS: ${ip} is not an IP address`);
  if (new Set(ips).size !== ips.length) throw new Error('GATEPOST_SOURCE_IPS lists an address twice');
  if (ips.length > 0 && env.GATEPOST_SMTP_RELAY) {
    throw new Error('GATEPOST_SOURCE_IPS is for direct delivery; with GATEPOST_SMTP_RELAY the relay connects to the MX hosts');
  }
  return ips;
}
