// What a BroadcastActor keeps, what it answers, and the port it admits contacts' messages through
// (the gate, handed to it by the composition root: actors never import the gate).
import type { ErrorCode } from '../../errors/errors.catalog.ts';
import type {
  ApiKey,
  BroadcastFanOut,
  BroadcastPaused,
  BroadcastState,
  BroadcastStatus,
  Contact,
} from '../../store/catalog.port.ts';

/** The content every message of a broadcast renders, fixed when it is sent (a template read then). */
export interface BroadcastContent {
  from: string;
  subject: string;
  html: string;
  text: string | null;
}

/** What a broadcast sends, and as whom: written once, when it is sent. */
export interface BroadcastPlan {
  tenant_id: string;
  /** The key that sent it: each message is this key's. */
  key: ApiKey;
  audience_id: string;
  content: BroadcastContent;
  /** Merge variables of every message, under each contact's own. */
  data: Record<string, unknown>;
  /** Captured, never delivered: a sandbox broadcast, or one sent with a sandbox key. */
  sandbox: boolean;
}

/** The statuses of a broadcast that has been sent (a draft has no actor state). */
export type SentStatus = Exclude<BroadcastStatus, 'draft'>;

/** What the fan-out has done so far; rewritten after each page, with the cursor, in one turn. */
export interface BroadcastProgress extends BroadcastFanOut {
  status: SentStatus;
  send_at: string | null;
  paused: BroadcastPaused | null;
  /** Where the next page of the audience starts (a contacts cursor); null: at its start. */
  cursor: string | null;
}

/** What the catalog keeps of a fan-out's progress (all but the cursor), for reads that do not ask the actor. */
export const stateOf = ({
  status,
  send_at,
  paused,
  admitted,
  refused,
  started_at,
  finished_at,
}: BroadcastProgress): BroadcastState => ({
  status,
  send_at,
  paused,
  progress: { admitted, refused, started_at, finished_at },
});

/** One contact's message, as the gate answered it: admitted (new or a replay), or refused with the error's code. */
export type ContactOutcome = { admitted: true } | { refused: ErrorCode; retry_after?: number };

/** Admits one message per contact through the gate (gate/broadcast.admission.ts), answering an outcome per contact, in order. */
export interface ContactAdmitter {
  admit(broadcastId: string, plan: BroadcastPlan, contacts: Contact[]): Promise<ContactOutcome[]>;
}
