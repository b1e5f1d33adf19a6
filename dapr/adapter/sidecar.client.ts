// Calls from an app to its daprd sidecar, over Dapr's documented HTTP API (v1.0): actor method
// invocation, actor state, actor reminders, pub/sub. Only what the runtime port needs. Reminders
// are registered over its gRPC API instead, the one that sets a failure policy (reminder.grpc.ts).
//
// Over an undici Pool of keep-alive connections rather than fetch: a send makes some thirty
// calls, and fetch's WHATWG layer (web streams, abort signals, a Request and Response each)
// took two fifths of the actor host's CPU under load (bench:send --runtime dapr, profile).
import { Pool } from 'undici';
import { GatepostError, isCodedErrorBody } from '../../errors/errors.catalog.ts';
import { CallLog } from './call.log.ts';
import { ReminderRegistrar } from './reminder.grpc.ts';

/**
 * What an actor method answers through the sidecar, always with HTTP 200: a value, a coded
 * refusal, or a failure (what it threw, as text). Never an error status: daprd's resiliency
 * retries a call whose app answered one, running the method again (see runtime.dapr.ts).
 */
export type MethodEnvelope = { ok: unknown } | { error: unknown } | { failed: string };

/** An actor method may deliver a mail (SMTP timeouts are 30–60 s); everything else is quick. */
const INVOKE_TIMEOUT_MS = 120_000;
const CALL_TIMEOUT_MS = 30_000;

/** What a call to the sidecar answered: its status and its whole body. */
interface Answer {
  status: number;
  ok: boolean;
  text: string;
}

interface CallInit {
  method?: 'GET' | 'PUT' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
}

/**
 * The actors a call is made from, outermost first (`type/id`, URI-encoded, comma-separated).
 * daprd passes it to the called app, whose turns refuse a call back into any of them: actors are
 * not reentrant, and such a call would wait for the lock its own caller holds until a deadline.
 */
export const CHAIN_HEADER = 'x-gatepost-actor-chain';

/**
 * `<process>.<call>`, on a call an app makes outside any turn: a turn it runs on the same app may
 * leave publications for the caller to hand to that app's own subscribers (runtime.dapr.ts, carry).
 */
export const CALLER_HEADER = 'x-gatepost-caller';

/** How long a call waits for placement to learn where an actor lives, and how often it asks. */
const PLACEMENT_WAIT_MS = 30_000;
const PLACEMENT_WAIT_STEP_MS = 250;

/** How long a connection to the sidecar stays open idle (undici's default: 4 s). */
const KEEP_ALIVE_MS = 600_000;

/** An ETag no stored key's version can equal: versions count up from 1 (saveState's `createOnly`). */
const NO_VERSION = '-1';

export class SidecarClient {
  readonly base: string;
  /** Every call made to the sidecar, by kind (the runtime adds the ones the sidecar makes to the app). */
  readonly calls = new CallLog();
  private readonly pool: Pool;
  private readonly reminders: ReminderRegistrar;

  constructor(ports: { http: number; grpc: number }, host = '127.0.0.1') {
    const origin = `http://${host}:${ports.http}`;
    this.base = `${origin}/v1.0`;
    // Kept open while idle, for ten minutes: one closing tells that daprd may have died (onDisconnect).
    this.pool = new Pool(origin, { keepAliveTimeout: KEEP_ALIVE_MS, keepAliveMaxTimeout: KEEP_ALIVE_MS });
    this.reminders = new ReminderRegistrar(ports.grpc, host);
  }

  /**
   * One call with a deadline, so a sidecar that never answers fails the call instead of hanging
   * it; `signal` ends it sooner (the turn making the call was cut off). `path` is under /v1.0.
   */
  private async call(path: string, init: CallInit = {}, timeoutMs = CALL_TIMEOUT_MS, signal?: AbortSignal): Promise<Answer> {
    const method = init.method ?? 'GET';
    try {
      const res = await this.pool.request({
        path: `/v1.0${path}`,
        method,
        headers: init.headers,
        body: init.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal,
      });
      const text = await res.body.text();
      return { status: res.statusCode, ok: res.statusCode >= 200 && res.statusCode < 300, text };
    } catch (error) {
      throw new Error(`${method} ${this.base}${path}: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Calls `listener` whenever a connection to the sidecar closes: it may have died (or was idle ten minutes). */
  onDisconnect(listener: () => void): void {
    this.pool.on('disconnect', listener);
  }

  /** Closes the pool's connections (the runtime has stopped). */
  close(): Promise<void> {
    this.reminders.close();
    return this.pool.close();
  }

  async invokeActor<R>(
    type: string,
    id: string,
    method: string,
    args: unknown,
    chain: string[] = [],
    signal?: AbortSignal,
    caller?: string,
  ): Promise<R> {
    const path = `/actors/${enc(type)}/${enc(id)}/method/${enc(method)}`;
    const body = JSON.stringify(args ?? null);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (chain.length > 0) headers[CHAIN_HEADER] = chain.map(enc).join(',');
    if (caller) headers[CALLER_HEADER] = caller;
    let res: Answer;
    for (let waited = 0; ; waited += PLACEMENT_WAIT_STEP_MS) {
      this.calls.count('actor_invocation', `${type}.${method}`);
      res = await this.call(path, { method: 'PUT', headers, body }, INVOKE_TIMEOUT_MS, signal);
      // While placement moves actors (a host joined or died) the sidecar may not know where an
      // actor lives. The call reached no actor, so trying again is always safe.
      if (res.ok || !res.text.includes('did not find address for actor') || waited >= PLACEMENT_WAIT_MS) break;
      await new Promise((r) => setTimeout(r, PLACEMENT_WAIT_STEP_MS));
    }
    if (!res.ok) throw new Error(`actor ${type}/${id} ${method}: HTTP ${res.status}: ${res.text}`);
    const envelope = JSON.parse(res.text) as MethodEnvelope;
    if ('failed' in envelope) throw new Error(`actor ${type}/${id} ${method} failed: ${envelope.failed}`);
    if ('error' in envelope) {
      if (isCodedErrorBody(envelope.error)) throw GatepostError.fromBody(envelope.error);
      throw new Error(`actor ${type}/${id} ${method}: ${JSON.stringify(envelope.error)}`);
    }
    return envelope.ok as R;
  }

  /** The JSON of the actor's state `key`, as daprd holds it; undefined when it has none. */
  async getStateJson(type: string, id: string, key: string): Promise<string | undefined> {
    this.calls.count('state_read', type);
    const res = await this.call(`/actors/${enc(type)}/${enc(id)}/state/${enc(key)}`);
    if (res.status === 204) return undefined;
    if (!res.ok) throw new Error(`state get ${type}/${id}/${key}: HTTP ${res.status}: ${res.text}`);
    return res.text === '' ? undefined : res.text;
  }

  /**
   * Saves the writes atomically (the state store must support transactions): key → its new value
   * as JSON, put in the body as it is, or undefined to delete the key. `createOnly`: each key is
   * written only where it is not there, and the save fails if one is. The ETag no version can
   * have does that on the Redis state store (its set script writes a key that has no version,
   * and otherwise only the version named); a store that refuses an ETag for a key it lacks fails
   * every such save, whose turn then runs again reading (DaprRuntime.runTurn): slower, not wrong.
   */
  async saveState(type: string, id: string, writes: ReadonlyMap<string, string | undefined>, createOnly = false): Promise<void> {
    if (writes.size === 0) return;
    this.calls.count('state_transaction', type);
    const operations: string[] = [];
    const etag = createOnly ? `,"etag":"${NO_VERSION}"` : '';
    for (const [key, json] of writes) {
      const request =
        json === undefined ? `{"key":${JSON.stringify(key)}}` : `{"key":${JSON.stringify(key)},"value":${json}${etag}}`;
      operations.push(`{"operation":"${json === undefined ? 'delete' : 'upsert'}","request":${request}}`);
    }
    const res = await this.call(`/actors/${enc(type)}/${enc(id)}/state`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `[${operations.join(',')}]`,
    });
    if (!res.ok) throw new Error(`state save ${type}/${id}: HTTP ${res.status}: ${res.text}`);
  }

  /**
   * A one-shot reminder at `dueAt` (ms since epoch); a past time fires at once. It is tried again
   * until the app takes it, however long the app is down. Its data reaches the app as base64.
   */
  async setReminder(type: string, id: string, name: string, dueAt: number, data: unknown): Promise<void> {
    this.calls.count('reminder_registered', type);
    await this.reminders.register(
      {
        type,
        id,
        name,
        // RFC 3339 absolute time; "0s" for now, since a time in the past may be refused.
        dueTime: dueAt > Date.now() ? new Date(dueAt).toISOString() : '0s',
        data: JSON.stringify(data ?? null),
      },
      CALL_TIMEOUT_MS,
    );
  }

  async deleteReminder(type: string, id: string, name: string): Promise<void> {
    this.calls.count('reminder_deleted', type);
    const res = await this.call(`/actors/${enc(type)}/${enc(id)}/reminders/${enc(name)}`, { method: 'DELETE' });
    if (!res.ok && res.status !== 404) {
      throw new Error(`reminder delete ${type}/${id}/${name}: HTTP ${res.status}: ${res.text}`);
    }
  }

  async publish(pubsub: string, topic: string, data: unknown, id: string): Promise<void> {
    this.calls.count('publish', topic);
    // The id travels as a CloudEvent attribute, so a redelivery carries the same one.
    const res = await this.call(`/publish/${enc(pubsub)}/${enc(topic)}?metadata.cloudevent.id=${enc(id)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(data),
    });
    if (!res.ok) throw new Error(`publish ${topic}: HTTP ${res.status}: ${res.text}`);
  }

  /** The type of the component `name` the sidecar has loaded (`pubsub.redis`, ...), or null. */
  async componentType(name: string): Promise<string | null> {
    const res = await this.call('/metadata');
    if (!res.ok) throw new Error(`metadata: HTTP ${res.status}: ${res.text}`);
    const { components = [] } = JSON.parse(res.text) as { components?: { name: string; type: string }[] };
    return components.find((c) => c.name === name)?.type ?? null;
  }

  async healthy(): Promise<boolean> {
    try {
      return (await this.call('/healthz/outbound')).ok;
    } catch {
      return false;
    }
  }
}

const enc = encodeURIComponent;
