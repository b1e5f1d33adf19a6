// One webhook attempt: resolve and check the destination (ssrf.guard.ts), then POST to the
// checked addresses only. The connection's `lookup` answers with the addresses the guard checked,
// so nothing resolves the name a second time (DNS rebinding finds nothing to rebind); the Host
// header and the TLS server name (SNI, certificate check) stay the URL's host. Redirects are
// never followed (a 3xx is an answer like any other non-2xx), the response body is read up to a
// cap and thrown away, and the whole attempt has one deadline.
import { LRUCache } from 'lru-cache';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { GatepostError } from '../errors/errors.catalog.ts';
import type { CheckedAddress, SsrfGuard } from './ssrf.guard.ts';

/** How much of a response body is read (then dropped); past this the connection is closed. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface PostRequest {
  /** Whose connections these are (the endpoint id): each has a pool of its own, so a hung receiver holds only its own sockets. */
  pool: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface PostAnswer {
  /** The HTTP status, or null when there was no answer (refused by the guard, no connection, timeout). */
  status: number | null;
  /** Why there was no 2xx: null on a 2xx. */
  error: string | null;
  /** `Retry-After` of a 429 or 503, in ms. */
  retryAfterMs: number | null;
  durationMs: number;
}

/** Seconds or an HTTP date (RFC 9110 §10.2.3), as ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** A lookup that answers with the checked addresses and never asks DNS. */
function pinnedLookup(addresses: CheckedAddress[]): LookupFunction {
  return ((_host: string, options: { family?: number | string; all?: boolean } | number, callback: Function) => {
    const family = typeof options === 'number' ? options : Number(options?.family ?? 0) || 0;
    const list = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    if (list.length === 0) {
      return callback(Object.assign(new Error(`no checked IPv${family} address`), { code: 'ENOTFOUND' }));
    }
    if (typeof options === 'object' && options?.all) return callback(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  }) as unknown as LookupFunction;
}

function describe(error: Error & { code?: string }): string {
  if (error.code && !error.message.includes(error.code)) return `${error.message} (${error.code})`;
  return error.message;
}

export class WebhookPoster {
  /**
   * Keep-alive agents, one per (pool, scheme, checked address set): a pooled socket only ever goes
   * where a check allowed, and one endpoint's hung requests never queue another's behind them.
   */
  // Past the cap the least recently used goes: not destroyed (requests may be under way on it),
  // its idle sockets close by the agent's timeout.
  private readonly agents: LRUCache<string, http.Agent>;

  constructor(
    private readonly guard: SsrfGuard,
    private readonly opts: { socketsPerDestination?: number; maxAgents?: number; userAgent?: string } = {},
  ) {
    this.agents = new LRUCache({ max: opts.maxAgents ?? 1024 });
  }

  private agentFor(pool: string, protocol: string, addresses: CheckedAddress[]): http.Agent {
    const key = `${pool}|${protocol}|${addresses.map((a) => a.address).join(',')}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const sockets = this.opts.socketsPerDestination ?? 8;
      const options = { keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets, timeout: 30_000 };
      agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
      this.agents.set(key, agent);
    }
    return agent;
  }

  async post(req: PostRequest): Promise<PostAnswer> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    let destination;
    try {
      destination = await this.guard.check(req.url);
    } catch (error) {
      const message = error instanceof GatepostError ? error.message : describe(error as Error);
      return { status: null, error: message, retryAfterMs: null, durationMs: took() };
    }
    const { url, host, addresses } = destination;
    const agent = this.agentFor(req.pool, url.protocol, addresses);
    const body = Buffer.from(req.body, 'utf8');
    return new Promise<PostAnswer>((resolve) => {
      let settled = false;
      const finish = (answer: Omit<PostAnswer, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve({ ...answer, durationMs: took() });
      };
      const request = (url.protocol === 'https:' ? https : http).request({
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent,
        lookup: pinnedLookup(addresses),
        auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
        headers: {
          ...req.headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': this.opts.userAgent ?? 'Gatepost-Webhooks/1',
        },
      });
      const deadline = setTimeout(() => {
        request.destroy();
        finish({ status: null, error: `no answer within ${req.timeoutMs / 1000} s (timed out)`, retryAfterMs: null });
      }, req.timeoutMs);
      request.on('error', (error) => finish({ status: null, error: describe(error), retryAfterMs: null }));
      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const answer = {
          status,
          error: status >= 200 && status < 300 ? null : `HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`,
          retryAfterMs: status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after']) : null,
        };
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // Enough: the body is not kept, and a receiver streaming forever must not hold us.
          if (read > MAX_RESPONSE_BYTES) {
            res.destroy();
            finish(answer);
          }
        });
        res.on('end', () => finish(answer));
        res.on('error', () => finish(answer));
        res.on('close', () => finish(answer));
      });
      request.end(body);
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
