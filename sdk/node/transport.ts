// One call to Gatepost: the URL from the operation table, the key, an idempotency key on sends,
// a timeout on every attempt, and bounded retries with backoff and jitter: after a 429 (waiting
// what Retry-After asks), and after a 5xx, a timeout or a lost connection when the operation is
// safe to send again (operations.ts). It runs in browsers too (sdk/browser bundles it): web
// platform globals only, and the environment read only where there is one.
import { GatepostError } from './errors.ts';
import { OPERATIONS, type OperationName } from './operations.ts';

export interface ClientOptions {
  /** An API key (gp_live_…, gp_sandbox_…); default the GATEPOST_API_KEY environment variable. */
  apiKey?: string;
  /** Where Gatepost answers; default GATEPOST_URL, then http://localhost:3000. */
  baseUrl?: string;
  /** Each attempt's deadline, ms (default 30,000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** The longest wait before a retry, ms (default 30,000): a 429 asking to wait longer is thrown at once. */
  maxRetryDelayMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** The idempotency key of a send (default: one made for this call, kept across its retries). */
  idempotencyKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  signal?: AbortSignal;
}

interface Call extends CallOptions {
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** A CSV file sent as it is (text/csv) instead of a JSON body; a Blob (`fs.openAsBlob`) is streamed from disk. */
  csv?: string | Blob;
  /** The answer is a download: its bytes as they are, not JSON. */
  bytes?: boolean;
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
}

const BASE_DELAY_MS = 500;

/** Full jitter: a random wait up to an exponentially growing cap. */
const backoff = (attempt: number, maxMs: number) => Math.random() * Math.min(maxMs, BASE_DELAY_MS * 2 ** attempt);

/** Retry-After in ms: seconds, or an HTTP date. */
function retryAfterMs(value: string | null): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new GatepostError('aborted', 'The call was aborted.', null));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function errorOf(res: Response): Promise<GatepostError> {
  const text = await res.text();
  let body: { error?: { code?: unknown; message?: unknown; details?: unknown } } | null = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: below
  }
  const e = body?.error;
  const retryAfter = retryAfterMs(res.headers.get('retry-after'));
  if (e && typeof e.code === 'string') {
    return new GatepostError(
      e.code,
      typeof e.message === 'string' ? e.message : e.code,
      res.status,
      Array.isArray(e.details) ? e.details : [],
      retryAfter === null ? null : Math.ceil(retryAfter / 1000),
    );
  }
  return new GatepostError('unexpected_response', `HTTP ${res.status}: ${text.slice(0, 200) || 'no body'}`, res.status);
}

export class Transport {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  /** Each attempt's deadline, ms, unless a call gives its own. */
  readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly fetch: typeof fetch;

  constructor(opts: ClientOptions = {}) {
    const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
    this.apiKey = opts.apiKey ?? env.GATEPOST_API_KEY;
    this.baseUrl = (opts.baseUrl ?? env.GATEPOST_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxRetries = opts.maxRetries ?? 2;
    this.maxRetryDelayMs = opts.maxRetryDelayMs ?? 30_000;
    // Bound: a browser's fetch called as a method of another object throws (Illegal invocation).
    this.fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  }

  url(name: OperationName, params: Record<string, string> = {}, query: Call['query'] = {}): string {
    const path = OPERATIONS[name].path.replace(/\{(\w+)\}/g, (_, p: string) => {
      const value = params[p];
      if (value === undefined || value === '') throw new TypeError(`${name}: ${p} is required.`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) search.set(k, String(v));
    const qs = search.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  async call<T>(name: OperationName, call: Call = {}): Promise<Answer<T>> {
    const op = OPERATIONS[name];
    const url = this.url(name, call.params, call.query);
    const headers: Record<string, string> = { accept: call.bytes ? '*/*' : 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (call.csv !== undefined) headers['content-type'] = 'text/csv';
    // Sends carry a key, the same on every attempt: a retry after a lost answer sends nothing twice.
    if (op.idempotent) headers['idempotency-key'] = call.idempotencyKey ?? crypto.randomUUID();
    const body = call.csv ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    const timeoutMs = call.timeoutMs ?? this.timeoutMs;
    const maxRetries = call.maxRetries ?? this.maxRetries;

    for (let attempt = 0; ; attempt++) {
      const last = attempt >= maxRetries;
      if (call.signal?.aborted) throw new GatepostError('aborted', 'The call was aborted.', null);
      const timeout = AbortSignal.timeout(timeoutMs);
      let res: Response;
      try {
        res = await this.fetch(url, {
          method: op.method,
          headers,
          body,
          signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
        });
      } catch (cause) {
        if (call.signal?.aborted) throw new GatepostError('aborted', 'The call was aborted.', null);
        const error = timeout.aborted
          ? new GatepostError('timeout', `No answer from ${op.method} ${url} within ${timeoutMs} ms.`, null)
          : new GatepostError(
              'connection_error',
              `${op.method} ${url}: ${(cause as Error).cause ?? (cause as Error).message}`,
              null,
            );
        if (last || !op.retrySafe) throw error;
        await sleep(backoff(attempt, this.maxRetryDelayMs), call.signal);
        continue;
      }
      if (res.ok) return { status: res.status, headers: res.headers, body: await this.bodyOf<T>(res, timeout, call.bytes) };
      const error = await errorOf(res);
      const retryable = res.status === 429 || (res.status >= 500 && op.retrySafe);
      if (last || !retryable) throw error;
      const asked = retryAfterMs(res.headers.get('retry-after'));
      if (asked !== null && asked > this.maxRetryDelayMs) throw error;
      await sleep(asked ?? backoff(attempt, this.maxRetryDelayMs), call.signal);
    }
  }

  private async bodyOf<T>(res: Response, timeout: AbortSignal, bytes = false): Promise<T> {
    if (res.status === 204) return undefined as T;
    let content: ArrayBuffer;
    try {
      content = await res.arrayBuffer();
    } catch {
      throw new GatepostError(timeout.aborted ? 'timeout' : 'connection_error', 'The answer was cut off.', res.status);
    }
    if (bytes) return new Uint8Array(content) as T;
    const text = new TextDecoder().decode(content);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new GatepostError('unexpected_response', `HTTP ${res.status} with a body that is not JSON.`, res.status);
    }
  }
}
