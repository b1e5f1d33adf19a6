// What a failed call throws: Gatepost's coded error (`{ error: { code, message, details } }`,
// docs/errors.md), or one of the client's own codes when there was no such answer.

/** Codes the client gives when Gatepost gave none. */
export type ClientErrorCode =
  /** No answer: the connection was refused or dropped (after the retries). */
  | 'connection_error'
  /** No answer within the call's timeout (after the retries). */
  | 'timeout'
  /** The caller's AbortSignal ended the call. */
  | 'aborted'
  /** An answer that is not Gatepost's: not JSON, or an error without a code (a proxy's page). */
  | 'unexpected_response';

export class GatepostError extends Error {
  constructor(
    /** The API's `error.code` (`recipient_suppressed`, `invalid_api_key`, …), or a ClientErrorCode. */
    readonly code: string,
    message: string,
    /** The HTTP status; null when there was no answer. */
    readonly status: number | null,
    readonly details: Array<{ field: string; message: string }> = [],
    /** Seconds, from the answer's Retry-After (a 429 whose wait was longer than the client waits). */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'GatepostError';
  }
}
