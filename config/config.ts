// The operator contract: every setting Gatepost reads from its environment, with its default.
import { hostname } from 'node:os';
import { resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  runtime: 'embedded' | 'dapr';
  adminToken: string | null;
  smtpRelay: string | null;
  /** The host name Gatepost names itself by (Message-ID fallback, greetings). */
  hostname: string;
  /** Waits between delivery attempts after a transient failure, in ms. */
  deliveryRetrySchedule: number[];
}

// About four days in all, as MTAs keep a deferred message (Postfix: 5 days).
const DEFAULT_RETRY_SCHEDULE = '1m,5m,15m,30m,1h,2h,4h,8h,16h,24h,24h';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDurations(name: string, text: string): number[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+(?:\.\d+)?)(ms|s|m|h|d)\s*$/.exec(part);
    if (!m) throw new Error(`${name}: "${part}" is not a duration like 30s, 5m or 2h`);
    return Number(m[1]) * UNITS[m[2]!]!;
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const runtime = env.GATEPOST_RUNTIME ?? 'embedded';
  if (runtime !== 'embedded' && runtime !== 'dapr') throw new Error(`GATEPOST_RUNTIME must be embedded or dapr, not ${runtime}`);
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, not ${env.PORT}`);
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    dataDir: resolve(env.GATEPOST_DATA_DIR ?? './data'),
    runtime,
    adminToken: env.GATEPOST_ADMIN_TOKEN || null,
    smtpRelay: env.GATEPOST_SMTP_RELAY || null,
    hostname: env.GATEPOST_HOSTNAME ?? hostname(),
    deliveryRetrySchedule: parseDurations('GATEPOST_DELIVERY_RETRY', env.GATEPOST_DELIVERY_RETRY ?? DEFAULT_RETRY_SCHEDULE),
  };
}
