// The official Postmark client (postmark.js), pointed at a started Gatepost instead of Postmark.
// Its `fetch` option is the one way to add a header it does not know (Idempotency-Key) and to see
// an answer's headers (Retry-After, Idempotent-Replayed) behind its typed errors.
import { ServerClient } from 'postmark';
import type { GatepostClient } from './gatepost.harness.ts';

export interface StylePClientOptions {
  idempotencyKey?: string;
  /** Called with every HTTP answer, before the client reads it. */
  onResponse?: (response: Response) => void;
}

export function stylePClient(gp: GatepostClient, key: string, opts: StylePClientOptions = {}): ServerClient {
  const { host } = new URL(gp.url);
  return new ServerClient(key, {
    requestHost: host,
    useHttps: false,
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      if (opts.idempotencyKey !== undefined) headers.set('Idempotency-Key', opts.idempotencyKey);
      const response = await fetch(input, { ...init, headers });
      opts.onResponse?.(response);
      return response;
    },
  });
}
