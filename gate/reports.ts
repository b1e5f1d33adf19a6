// A bounce or complaint that came back to a message's return path (docs/bounces.md): the
// message's actor checks it is the reporting tenant's, records it, and suppresses the recipient.
// The intake (ingress/inbound/bounces.intake.ts) never learns which actor holds the message.
import { actor, type Invoker } from '../runtime/runtime.port.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import type { LateReport, LateReportResult } from '../actors/message/message.state.ts';

export type { LateReport, LateReportResult };

export function recordReport(invoker: Invoker, messageId: string, report: LateReport): Promise<LateReportResult> {
  return actor(invoker, messageActor, messageId).recordReport(report);
}
