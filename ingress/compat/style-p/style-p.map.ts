// Style P messages to SendDrafts (one per To address, each carrying the Cc and Bcc), and the
// gate's outcomes back to Style P results.
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { invalid, type ErrorDetail } from '../../../errors/errors.catalog.ts';
import type { BatchResult, SendDraft, Stream } from '../../../gate/gate.ts';
import { htmlFromText } from '../../../mail/content.ts';
import { controlCharacterProblems } from '../../../mail/address.ts';
import { stylePFailure } from './style-p.errors.ts';
import { MAX_RECIPIENTS, type StylePMessage, type StylePResult, type StylePTemplatedMessage } from './style-p.schema.ts';

export type StylePSource = { templated: false; message: StylePMessage } | { templated: true; message: StylePTemplatedMessage };

/**
 * Postmark's stream ids: "outbound" is every server's default transactional stream, "broadcast"
 * its default broadcast stream. Gatepost's own names are accepted too. Any other id is refused:
 * guessing its kind could send marketing mail as transactional, or the other way round.
 */
const STREAMS: Record<string, Stream> = { outbound: 'transactional', transactional: 'transactional', broadcast: 'broadcast' };

/** "a@x.com, \"Doe, J\" <j@x.com>" → one mailbox each; text that is no address is kept, for the gate to refuse. */
export function splitAddresses(list: string | undefined): string[] {
  if (list === undefined) return [];
  return addressparser(list, { flatten: true }).map(({ name, address }) => {
    if (!address) return name;
    return name ? `"${name.replace(/(["\\])/g, '\\$1')}" <${address}>` : address;
  });
}

/** Headers and Metadata, as mail headers (Postmark's SMTP name for the latter). */
function headersOf(m: StylePMessage | StylePTemplatedMessage, problems: ErrorDetail[]): Record<string, string> | undefined {
  const pairs: [string, string, string][] = (m.Headers ?? []).map((h, i) => [h.Name, h.Value, `Headers[${i}]`]);
  for (const [key, value] of Object.entries(m.Metadata ?? {})) pairs.push([`X-PM-Metadata-${key}`, value, `Metadata.${key}`]);
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value, field] of pairs) {
    // A mail header appears once here: a second value would be dropped, so it is refused.
    if (seen.has(name.toLowerCase())) problems.push({ field, message: `sets the header ${name} a second time` });
    seen.add(name.toLowerCase());
    headers[name] = value;
  }
  return pairs.length > 0 ? headers : undefined;
}

function contentOf(source: StylePSource, problems: ErrorDetail[]): SendDraft {
  if (!source.templated) {
    const { Subject, HtmlBody, TextBody } = source.message;
    const html = HtmlBody || (TextBody ? htmlFromText(TextBody) : undefined);
    if (!html) problems.push({ field: 'HtmlBody', message: 'give HtmlBody, TextBody or both' });
    return { subject: Subject, html, text: TextBody || undefined, literal: true };
  }
  const { TemplateId, TemplateAlias, TemplateModel } = source.message;
  if ((TemplateId === undefined) === (TemplateAlias === undefined)) {
    problems.push({ field: 'TemplateId', message: 'give either TemplateId or TemplateAlias' });
  }
  return { template: TemplateAlias ?? String(TemplateId), data: TemplateModel ?? {} };
}

/**
 * TrackLinks as Gatepost's click tracking, which rewrites the html's links only: `HtmlOnly` and
 * `HtmlAndText` track them (the text part keeps its links), `TextOnly` and `None` track none.
 */
const tracksClicks = (links: StylePMessage['TrackLinks']) =>
  links === undefined ? undefined : links === 'HtmlOnly' || links === 'HtmlAndText';

const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/**
 * The drafts of one Style P message: one per To address, each with the Cc and Bcc (spec part 2).
 * Without To there is one draft, whose recipient the template must store.
 */
export function draftsOf(source: StylePSource): SendDraft[] {
  const m = source.message;
  const problems = controlCharacterProblems({ To: m.To, Cc: m.Cc, Bcc: m.Bcc, From: m.From, ReplyTo: m.ReplyTo });
  if (problems.length > 0) throw invalid(problems);
  const to = splitAddresses(m.To);
  const cc = splitAddresses(m.Cc);
  const bcc = splitAddresses(m.Bcc);
  if (m.To !== undefined && to.length === 0) problems.push({ field: 'To', message: 'names no address' });
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) {
    problems.push({ field: 'To', message: `To, Cc and Bcc name at most ${MAX_RECIPIENTS} addresses together` });
  }
  const stream = m.MessageStream === undefined ? undefined : STREAMS[m.MessageStream];
  if (m.MessageStream !== undefined && !stream) {
    problems.push({ field: 'MessageStream', message: 'Gatepost knows "outbound" (transactional) and "broadcast"' });
  }
  const shared: SendDraft = defined({
    ...contentOf(source, problems),
    from: m.From,
    cc: cc.length ? cc : undefined,
    bcc: bcc.length ? bcc : undefined,
    reply_to: m.ReplyTo,
    headers: headersOf(m, problems),
    tags: m.Tag === undefined ? undefined : [m.Tag],
    stream,
    track_opens: m.TrackOpens,
    track_clicks: tracksClicks(m.TrackLinks),
    attachments: m.Attachments?.length,
  });
  if (problems.length > 0) throw invalid(problems);
  return to.length === 0 ? [shared] : to.map((address) => ({ ...shared, to: address }));
}

/**
 * The Style P result of one message, from the outcomes of its drafts (same order). With several
 * To addresses, `Recipients` says what became of each; the first refusal sets the ErrorCode.
 */
export function resultOf(to: string | undefined, drafts: SendDraft[], outcomes: BatchResult[]): StylePResult {
  const refused = outcomes.flatMap((o) => ('refused' in o ? [o.refused] : []));
  const first = outcomes.flatMap((o) => ('ok' in o ? [o.ok.response] : []))[0];
  const recipients =
    outcomes.length > 1
      ? outcomes.map((o, j) =>
          'ok' in o
            ? { To: o.ok.response.to, ErrorCode: 0, Message: 'OK', MessageID: o.ok.response.id }
            : { To: drafts[j]!.to ?? '', ...stylePFailure(o.refused).body },
        )
      : undefined;
  const answer = refused.length > 0 ? stylePFailure(refused[0]!, refused).body : { ErrorCode: 0, Message: 'OK' };
  return defined({
    ...answer,
    To: to ?? first?.to,
    ...(refused.length === 0 && first ? { SubmittedAt: first.created_at, MessageID: first.id } : {}),
    Recipients: recipients,
  });
}

/** Every outcome refused, or accepted: for the `Idempotent-Replayed` header. */
export function allReplayed(outcomes: BatchResult[]): boolean {
  return outcomes.length > 0 && outcomes.every((o) => 'ok' in o && o.ok.replayed);
}
