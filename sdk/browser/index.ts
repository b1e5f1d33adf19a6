// Gatepost's browser SDK: `send(template, params)` from a web page with a public key, through
// POST /v1/browser/emails. The page names a stored template and fills its placeholders; the
// template alone names the recipient (spec part 1 rule 13), so a key any visitor can read cannot
// mail anyone else. Built into one ESM file (dist/gatepost.js) with the Node SDK's transport
// bundled in: its timeouts, retries with backoff on 429 and 5xx, and an idempotency key per send,
// the same on every retry, so a retry after a lost answer sends nothing twice.
import { GatepostError } from '../node/errors.ts';
import { Transport } from '../node/transport.ts';

export { GatepostError };

export interface BrowserOptions {
  /** A public key (gp_public_…; one made with `"sandbox": true` to try a page out). */
  publicKey: string;
  /** Where Gatepost answers, e.g. https://mail.example.com. */
  baseUrl: string;
  /** Each attempt's deadline, ms (default 30,000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
}

export interface SendOptions {
  /** `transactional` (default) or `broadcast`. */
  stream?: 'transactional' | 'broadcast';
  /** Makes a send safe to repeat (default: one made for this call, kept across its retries). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** What Gatepost answers a send: the message it committed. */
export interface Sent {
  id: string;
  status: 'queued' | 'scheduled';
  /** The template's recipient. */
  to: string;
  created_at: string;
  send_at: string | null;
  /** True for a sandbox key: captured, not delivered. */
  sandbox: boolean;
  /** True when Gatepost answered a repeat of an earlier send with the same idempotency key. */
  replayed: boolean;
}

export class GatepostBrowser {
  private readonly transport: Transport;

  constructor(options: BrowserOptions) {
    if (!options?.publicKey) throw new GatepostError('missing_api_key', 'Give the public key: { publicKey: "gp_public_…" }.', null);
    if (!options.baseUrl) throw new GatepostError('invalid_request', 'Give where Gatepost answers: { baseUrl }.', null);
    this.transport = new Transport({
      apiKey: options.publicKey,
      baseUrl: options.baseUrl,
      timeoutMs: options.timeoutMs,
      maxRetries: options.maxRetries,
    });
  }

  /** Sends the stored template `template` with `params` for its {{placeholders}}; throws a GatepostError with the API's code when refused. */
  async send(template: string, params: Record<string, unknown> = {}, options: SendOptions = {}): Promise<Sent> {
    const { stream, ...call } = options;
    const { headers, body } = await this.transport.call<Omit<Sent, 'replayed'>>('browserSend', {
      ...call,
      body: { template, data: params, ...(stream ? { stream } : {}) },
    });
    return { ...body, replayed: headers.get('idempotent-replayed') === 'true' };
  }
}

let shared: GatepostBrowser | null = null;

/** Sets the key and address `send` uses, as EmailJS's `init` does. */
export function init(options: BrowserOptions): GatepostBrowser {
  shared = new GatepostBrowser(options);
  return shared;
}

/** `send` of the client `init` made. */
export function send(template: string, params?: Record<string, unknown>, options?: SendOptions): Promise<Sent> {
  if (!shared) throw new GatepostError('invalid_request', 'Call init({ publicKey, baseUrl }) before send.', null);
  return shared.send(template, params, options);
}
