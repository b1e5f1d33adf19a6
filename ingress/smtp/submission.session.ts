// The SMTP verbs of a submission session as plain functions that answer replies, so each is
// tested without a socket (STYLE 7); submission.smtp.ts hands them smtp-server's hooks.
import ipaddr from 'ipaddr.js';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Gate, Sender } from '../../gate/gate.ts';
import { isValidAddress } from '../../mail/address.ts';
import type { KeyRing } from '../../tenancy/keys.ts';
import type { Envelope } from './submission.drafts.ts';
import type { AuthThrottle } from './submission.throttle.ts';
import { inlineParser, type SubmissionParser } from './submission.parser.ts';
import { replies, replyFor, type SmtpReply } from './submission.replies.ts';

export interface SubmissionDeps {
  gate: Gate;
  keys: KeyRing;
  log: (message: string, error?: unknown) => void;
  /** Counts failed AUTH, per connection and per address. */
  throttle: AuthThrottle;
  /** Where DATA is parsed into drafts; the calling thread unless given (the server gives a thread of its own). */
  parser?: SubmissionParser;
}

/** Recipients of one transaction; RFC 5321 §4.5.3.1.8 asks a server to take at least 100. */
export const MAX_RECIPIENTS = 100;
/** The largest DATA accepted, announced as SIZE (RFC 1870). The rendered message has its own 1 MiB limit. */
export const MAX_DATA_BYTES = 10 * 1024 * 1024;

/** A refusal as its reply; anything that is not one is ours, logged, and answered 451. */
function refusal(deps: SubmissionDeps, error: unknown, what: string): SmtpReply {
  if (error instanceof GatepostError) return replyFor(error);
  deps.log(`SMTP submission: ${what} failed`, error);
  return replies.failed;
}

/**
 * Whether a connection may AUTH: over TLS, or without it from loopback only, so that a client
 * that does not insist on STARTTLS never sends its API key in clear across a network (issue 20).
 * The server neither advertises nor accepts AUTH on a connection where this is false.
 */
export function authOffered(connection: { secure: boolean; remoteAddress: string }): boolean {
  if (connection.secure) return true;
  // An address smtp-server could not read (a client gone before it was accepted) is no loopback.
  return ipaddr.isValid(connection.remoteAddress) && ipaddr.process(connection.remoteAddress).range() === 'loopback';
}

/**
 * AUTH PLAIN or LOGIN (where authOffered): any user name, a Gatepost API key as the password.
 * A refused key counts against the session and its address (AuthThrottle); a failure of ours does not.
 */
export async function authenticate(
  deps: SubmissionDeps,
  auth: { password: string | null | undefined; session: object; remoteAddress: string },
): Promise<{ sender: Sender } | { reply: SmtpReply }> {
  const throttled = deps.throttle.refusal(auth.remoteAddress);
  if (throttled) return { reply: throttled };
  try {
    if (!auth.password) throw new GatepostError('missing_api_key');
    const sender = await deps.keys.resolve(auth.password);
    if (sender.key.kind === 'public') {
      throw new GatepostError(
        'key_not_allowed',
        'A public key (gp_public_) only works with the browser SDK; use a live or sandbox key.',
      );
    }
    return { sender };
  } catch (error) {
    const reply = refusal(deps, error, 'AUTH');
    return { reply: reply.code >= 500 ? (deps.throttle.failed(auth.session, auth.remoteAddress) ?? reply) : reply };
  }
}

/**
 * RCPT TO: a valid address, not suppressed by the tenant, within the recipients of one
 * transaction. Null accepts it. Refusing a suppressed recipient here tells the client which
 * one it is; the others of the message go on.
 */
export async function checkRecipient(
  deps: SubmissionDeps,
  sender: Sender,
  address: string,
  alreadyAccepted: number,
): Promise<SmtpReply | null> {
  if (alreadyAccepted >= MAX_RECIPIENTS) return replies.tooManyRecipients(MAX_RECIPIENTS);
  try {
    if (!isValidAddress(address)) {
      throw new GatepostError('invalid_request', `<${address}> is not an address Gatepost can send to.`);
    }
    await deps.gate.checkRecipient(sender, address);
    return null;
  } catch (error) {
    return refusal(deps, error, 'RCPT TO');
  }
}

/**
 * DATA: one message per envelope recipient, admitted all together, so the reply is true of every
 * recipient: 250 when each message is committed, a refusal when none is.
 */
export async function submit(
  deps: SubmissionDeps,
  /** `id`: the SMTP session's id, which the messages keep as their request id. */
  session: { sender: Sender; envelope: Envelope; id?: string },
  data: { raw: Buffer; oversized: boolean },
): Promise<SmtpReply> {
  try {
    if (data.oversized) {
      throw new GatepostError('message_too_large', `The message is over ${MAX_DATA_BYTES} bytes, the SIZE this server accepts.`);
    }
    const { items, batchKey } = await (deps.parser ?? inlineParser).parse(data.raw, session.envelope);
    const results = await deps.gate.admitAll({
      sender: session.sender,
      ingress: 'smtp',
      items,
      batchKey,
      refusals: 'all',
      ...(session.id ? { requestId: session.id } : {}),
    });
    const admitted = results.map((r) => {
      // With refusals 'all' the gate throws any refusal; a refused result would be a gate bug.
      if ('refused' in r) throw r.refused;
      return r.ok;
    });
    return replies.queued(admitted);
  } catch (error) {
    return refusal(deps, error, 'DATA');
  }
}
