// What the provider styles that fan one request out into several messages (Style S, Style M)
// share: the all-or-nothing admission of the messages, each keyed from the request's
// Idempotency-Key header (a Gatepost extension: neither provider has one), and the Gatepost
// headers that tell a client more than the provider's answer can.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Gate, Ingress, SendDraft, Sender } from '../../gate/gate.ts';

/** Every message a request made, in order, comma-separated: the provider's answer names one. */
export const MESSAGE_IDS_HEADER = 'Gatepost-Message-Ids';
/**
 * The most ids the header lists (about 3 KB): HTTP clients refuse answers whose headers pass
 * 16 KB (Node's default), and a request may make 1000 messages. Beyond, the header is left out.
 */
export const MAX_LISTED_IDS = 100;

export interface FannedOut {
  draft: SendDraft;
  /** Appended to the request's idempotency key to make this message's own (`<key>:<suffix>`). */
  keySuffix: string;
}

export interface Admitted {
  responses: Awaited<ReturnType<Gate['admit']>>['response'][];
  /** The whole request was a replay of one already admitted. */
  replayed: boolean;
}

/**
 * Admits every message of one request, or none (spec part 4 rule 4): a refusal of any message
 * refuses the request, thrown as the gate's `ItemRefused` naming the message at fault. Neither
 * provider answers per recipient, so a partial send would be invisible to the sender.
 */
export async function admitAllOrNothing(
  gate: Gate,
  args: { sender: Sender; ingress: Ingress; items: FannedOut[]; idempotencyKey: string | undefined; requestId: string },
): Promise<Admitted> {
  const { idempotencyKey } = args;
  const results = await gate.admitAll({
    sender: args.sender,
    ingress: args.ingress,
    items: args.items.map(({ draft, keySuffix }) => ({
      draft,
      ...(idempotencyKey !== undefined ? { idempotencyKey: `${idempotencyKey}:${keySuffix}` } : {}),
    })),
    ...(idempotencyKey !== undefined ? { batchKey: idempotencyKey } : {}),
    refusals: 'all',
    requestId: args.requestId,
  });
  // With refusals 'all' every result is admitted; anything else was thrown.
  const admitted = results.map((r) => ('ok' in r ? r.ok : null)).filter((r) => r !== null);
  return { responses: admitted.map((a) => a.response), replayed: admitted.every((a) => a.replayed) };
}

/** The Gatepost headers of a successful answer: the message ids, and whether it was a replay. */
export function admittedHeaders(reply: FastifyReply, { responses, replayed }: Admitted): void {
  if (responses.length <= MAX_LISTED_IDS) reply.header(MESSAGE_IDS_HEADER, responses.map((r) => r.id).join(', '));
  if (replayed) reply.header('Idempotent-Replayed', 'true');
}

/**
 * A provider's scheduled time as the gate takes it. Both providers send at once when the time
 * has come already; a time less than a second away is treated as now, so that it cannot pass
 * by between here and the gate's own check.
 */
export function scheduledAt(at: Date, now = Date.now()): string | undefined {
  return at.getTime() > now + 1000 ? at.toISOString() : undefined;
}
