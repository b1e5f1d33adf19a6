// What a BroadcastActor keeps, what it answers, and the port it admits contacts' messages through
// (the gate, handed to it by the composition root: actors never import the gate).
import type { ErrorCode } from '../../errors/errors.catalog.ts';
import type { ApiKey, BroadcastStatus, Contact } from '../../store/catalog.port.ts';

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
export interface BroadcastProgress {
  status: SentStatus;
  send_at: string | null;
  /** Why a paused broadcast waits (an open reputation breaker, the tenant's daily quota), and until when. */
  paused: { reason: string; until: string } | null;
  started_at: string | null;
  finished_at: string | null;
  /** Where the next page of the audience starts (a contacts cursor); null: at its start. */
  cursor: string | null;
  /** Messages the gate admitted (a message admitted before a crash, admitted again, is the same message). */
  admitted: number;
  refused: {
    /** The gate refused the address: the tenant's suppression list has it. */
    suppressed: number;
    /** Skipped: the contact is unsubscribed from the audience. */
    unsubscribed: number;
    /** The gate refused it for another reason (a render over its limits, a sender no longer verified). */
    other: number;
  };
}

/** One contact's message, as the gate answered it: admitted (new or a replay), or refused with the error's code. */
export type ContactOutcome = { admitted: true } | { refused: ErrorCode; retry_after?: number };

/** Admits one message per contact through the gate (gate/broadcast.admission.ts), answering an outcome per contact, in order. */
export interface ContactAdmitter {
  admit(broadcastId: string, plan: BroadcastPlan, contacts: Contact[]): Promise<ContactOutcome[]>;
}
