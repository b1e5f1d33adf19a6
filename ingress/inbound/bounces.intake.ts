// The ReportIntake (report.intake.ts) that turns bounces and complaints into events: each message
// the inbound MX takes for a return-path domain (`bounces.<verified domain>`) is parsed once
// (mail/report.parse.ts), tied to its message, recorded on it through the gate, and kept in the
// catalog whatever came of it, so an unrecognisable report is visible, never dropped
// (docs/bounces.md). Tying: a VERP recipient (`b+<message id>@bounces.<domain>`) names the
// message; a report to the feedback-loop address (`fbl@bounces.<domain>`) is tied by the VERP
// return-path or the Message-ID of the original message it includes. Either way the message must
// be the tenant's whose verified domain owns the return-path domain, which its actor checks.
import type { Invoker } from '../../runtime/runtime.port.ts';
import type { Catalog, ReceivedReport, ReportOutcome } from '../../store/catalog.port.ts';
import { newId } from '../../lib/ids.ts';
import { parseReport, type ParsedReport } from '../../mail/report.parse.ts';
import { isComplaint } from '../../mail/report.arf.ts';
import { recordReport, type LateReport, type LateReportResult } from '../../gate/reports.ts';
import type { ArrivedReport, ReportIntake } from './report.intake.ts';

/** The local part of the feedback-loop address on every return-path domain. */
export const FEEDBACK_LOOP_LOCAL_PART = 'fbl';
const RETURN_PATH_PREFIX = 'bounces.';
/** How much of an unrecognised message is kept to look at. */
const EXCERPT_BYTES = 2048;
const MESSAGE_ID = /^msg_[0-9a-z]+$/;

/** What the intake needs: the actors (through the gate) and the catalog. */
export interface BouncesIntakeDeps {
  invoker: Invoker;
  catalog: Catalog;
}

/** A report's conclusion before it is kept. */
interface Conclusion {
  outcome: ReportOutcome;
  message_id: string | null;
  reason: string | null;
}

const unrecognised = (reason: string, message_id: string | null = null): Conclusion => ({
  outcome: 'unrecognised',
  message_id,
  reason,
});

/** The message id of a VERP address (`b+msg_…@…`), any case; null for another address. */
function verpMessageId(address: string | null | undefined): string | null {
  const m = address ? /^b\+(msg_[0-9a-z]+)@/i.exec(address.trim()) : null;
  return m ? m[1]!.toLowerCase() : null;
}

/** A Message-ID Gatepost made (`<msg_…@from domain>`): its message id. */
function messageIdHeaderId(header: string | null | undefined): string | null {
  const m = header ? /^<(msg_[0-9a-z]+)@[^>]+>$/i.exec(header.trim()) : null;
  return m && MESSAGE_ID.test(m[1]!.toLowerCase()) ? m[1]!.toLowerCase() : null;
}

/** The message a report is about: named by its VERP recipient, or, for the feedback-loop address, by the original it includes. */
function messageOf(local: string, rcpt: string, parsed: ParsedReport): string | null {
  const byRcpt = verpMessageId(rcpt);
  if (byRcpt) return byRcpt;
  if (local !== FEEDBACK_LOOP_LOCAL_PART) return null;
  return (
    verpMessageId(parsed.original?.return_path) ??
    (parsed.kind === 'arf' ? verpMessageId(parsed.original_mail_from) : null) ??
    messageIdHeaderId(parsed.original?.message_id)
  );
}

/** What a parsed report asks to record: one bounce per failed or delayed recipient, or one complaint. */
function lateReportsOf(parsed: ParsedReport, tenantId: string, reportId: string): LateReport[] | string {
  const base = { tenant_id: tenantId, report_id: reportId };
  switch (parsed.kind) {
    case 'dsn':
    case 'plain': {
      const bounces = parsed.recipients.filter((r) => r.action === 'failed' || r.action === 'delayed');
      if (bounces.length === 0)
        return `a delivery status notification of ${parsed.recipients.map((r) => r.action).join(', ')}: nothing failed or was delayed`;
      return bounces.map((r) => ({
        ...base,
        kind: 'bounce',
        source: parsed.kind,
        recipient: r.recipient,
        action: r.action as 'failed' | 'delayed',
        status: r.status,
        smtp_code: r.smtp_code,
        diagnostic: r.diagnostic,
        remote_mta: r.remote_mta,
      }));
    }
    case 'arf':
      if (!isComplaint(parsed.feedback_type)) {
        return `an abuse report of feedback type ${parsed.feedback_type}, which is not a complaint`;
      }
      return [
        {
          ...base,
          kind: 'complaint',
          recipient: parsed.recipient,
          feedback_type: parsed.feedback_type,
          user_agent: parsed.user_agent,
        },
      ];
    case 'unknown':
      return parsed.reason;
  }
}

/** What the recipients' results come to: recorded if any was, a repeat if all were, else the first refusal. */
function concludeFrom(results: LateReportResult[], messageId: string): Conclusion {
  if (results.some((r) => r.result === 'recorded')) return { outcome: 'recorded', message_id: messageId, reason: null };
  if (results.every((r) => r.result === 'repeat')) return { outcome: 'repeat', message_id: messageId, reason: null };
  const refused = results.find((r) => r.result === 'refused') as { reason: string };
  return unrecognised(refused.reason, messageId);
}

/** PostgreSQL's text and jsonb refuse NUL; junk may hold it (and other control characters) anywhere. */
const printable = (s: string) => s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd');

function printableJson(value: unknown): unknown {
  if (typeof value === 'string') return printable(value);
  if (Array.isArray(value)) return value.map(printableJson);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, printableJson(v)]));
  return value;
}

export function bouncesIntake({ invoker, catalog }: BouncesIntakeDeps): ReportIntake {
  async function conclude(
    report: ArrivedReport,
    id: string,
    parsed: ParsedReport,
  ): Promise<{ tenant: string | null; conclusion: Conclusion }> {
    const rcpt = report.rcpt.trim().toLowerCase();
    const at = rcpt.lastIndexOf('@');
    const local = rcpt.slice(0, at);
    const domain = rcpt.slice(at + 1);
    if (at < 0 || !domain.startsWith(RETURN_PATH_PREFIX))
      return { tenant: null, conclusion: unrecognised(`${rcpt} is not on a return-path domain`) };
    const sendingDomain = domain.slice(RETURN_PATH_PREFIX.length);
    const tenant = await catalog.domainOwner(sendingDomain);
    if (!tenant) return { tenant: null, conclusion: unrecognised(`no tenant has ${sendingDomain} verified`) };
    const messageId = messageOf(local, rcpt, parsed);
    if (!messageId) {
      const why =
        local === FEEDBACK_LOOP_LOCAL_PART
          ? 'the report includes no original message naming a message of Gatepost'
          : `${rcpt} is neither a VERP address nor the feedback-loop address`;
      return { tenant, conclusion: unrecognised(why) };
    }
    const late = lateReportsOf(parsed, tenant, id);
    if (typeof late === 'string') return { tenant, conclusion: unrecognised(late, messageId) };
    const results: LateReportResult[] = [];
    for (const r of late) results.push(await recordReport(invoker, messageId, r));
    return { tenant, conclusion: concludeFrom(results, messageId) };
  }

  return {
    async take(report) {
      const id = newId('rpt');
      let parsed: ParsedReport;
      try {
        parsed = parseReport(report.raw);
      } catch (error) {
        parsed = { kind: 'unknown', reason: `the message could not be read: ${(error as Error).message}`, original: null };
      }
      // A failure of the actors throws: the listener answers 4xx and the sender tries again,
      // which the message actor answers as a repeat once recorded.
      const { tenant, conclusion } = await conclude(report, id, parsed);
      const { kind, ...findings } = parsed;
      const kept: ReceivedReport = {
        id,
        tenant_id: tenant,
        rcpt: printable(report.rcpt),
        mail_from: printable(report.mailFrom),
        remote_address: report.remoteAddress,
        received_at: report.receivedAt,
        kind,
        ...conclusion,
        findings: printableJson(findings) as Record<string, unknown>,
        excerpt:
          conclusion.outcome === 'unrecognised' ? printable(report.raw.subarray(0, EXCERPT_BYTES).toString('latin1')) : null,
        size: report.raw.length,
      };
      await catalog.putReport(kept);
    },
  };
}
