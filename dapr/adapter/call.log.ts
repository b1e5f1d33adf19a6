// Counts the calls between an app and its daprd, both ways, by kind and target, so that what a
// send costs in calls between processes can be read (GET /metrics: gatepost_dapr_calls_total).

export type CallKind =
  // app → daprd
  | 'actor_invocation'
  | 'state_read'
  | 'state_transaction'
  | 'reminder_registered'
  | 'reminder_deleted'
  | 'publish'
  // daprd → app
  | 'actor_call_served'
  | 'reminder_fired'
  | 'publication_received'
  // neither: a call to an actor daprd placed on this app, run here without the sidecar
  | 'actor_call_local';

export interface CallCount {
  kind: CallKind;
  /** `Type.method` of an actor call, the actor type of state and reminders, the topic of a publication. */
  target: string;
  count: number;
}

export class CallLog {
  private readonly counts = new Map<string, CallCount>();

  count(kind: CallKind, target: string): void {
    const key = `${kind} ${target}`;
    const row = this.counts.get(key);
    if (row) row.count++;
    else this.counts.set(key, { kind, target, count: 1 });
  }

  snapshot(): CallCount[] {
    return [...this.counts.values()].map((row) => ({ ...row }));
  }
}
