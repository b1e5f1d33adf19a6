// Style S: a SendGrid mail send as Gatepost SendDrafts. A Gatepost message has exactly one `to`,
// so each personalization fans out into one message per `to` address, each carrying that
// personalization's cc and bcc. Fields at fault are named as SendGrid names them.
import { GatepostError, invalid, type ErrorDetail } from '../../../errors/errors.catalog.ts';
import type { SendDraft } from '../../../gate/gate.ts';
import { htmlFromText } from '../../../mail/content.ts';
import { formatMailbox } from '../../../mail/address.ts';
import { scheduledAt, type FannedOut } from '../compat.admission.ts';
import type { EmailObject, Personalization, SendGridMail } from './style-s.schema.ts';

export interface SendGridItem extends FannedOut {
  personalization: number;
  /** The index of this message's address in its personalization's `to`. */
  to: number;
  /** Which fields of the message its personalization set (the rest came from the top level). */
  own: Set<string>;
}

const mailbox = (e: EmailObject) => formatMailbox(e.email, e.name);

// The key form @sendgrid/mail writes for substitutions (its default wrappers): a merge variable.
const SUBSTITUTION_KEY = /^\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}$/;

/** Whether the request asks for SendGrid's sandbox mode: Gatepost captures instead of delivering. */
export function sandboxMode(mail: SendGridMail): boolean {
  return mail.mail_settings?.sandbox_mode?.enable === true;
}

/** SendGrid's tracking settings Gatepost acts on (docs/tracking.md): each a send's switch. */
const TRACKING = {
  click_tracking: 'track_clicks',
  open_tracking: 'track_opens',
  subscription_tracking: 'list_unsubscribe',
} as const;

/** The switches `tracking_settings` sets; one it leaves out keeps its default. */
function trackingOf(mail: SendGridMail): Pick<SendDraft, (typeof TRACKING)[keyof typeof TRACKING]> {
  return Object.fromEntries(
    Object.entries(TRACKING).flatMap(([setting, field]) => {
      const enable = mail.tracking_settings?.[setting]?.enable;
      return enable === undefined ? [] : [[field, enable]];
    }),
  );
}

/** The messages of a request, in order: personalization by personalization, `to` by `to`. */
export function itemsOf(mail: SendGridMail, now = Date.now()): SendGridItem[] {
  const problems = [...settingProblems(mail), ...contentProblems(mail)];
  const { html, text } = bodiesOf(mail);
  const tracking = trackingOf(mail);
  const items: SendGridItem[] = [];
  mail.personalizations.forEach((p, i) => {
    problems.push(...personalizationProblems(p, i));
    const own = new Set<string>([
      ...(['from', 'subject', 'send_at'] as const).filter((f) => p[f] !== undefined),
      ...Object.keys(p.headers ?? {}).map((h) => `headers.${h}`),
    ]);
    const from = p.from ?? mail.from;
    const sendAt = p.send_at ?? mail.send_at;
    const headers = { ...mail.headers, ...p.headers };
    const customArgs = { ...mail.custom_args, ...p.custom_args };
    const tags = [...(mail.categories ?? []), ...Object.entries(customArgs).map(([k, v]) => `${k}:${v}`)];
    const data = { ...substitutionData(p), ...p.dynamic_template_data };
    p.to.forEach((to, j) => {
      const draft: SendDraft = {
        from: from && mailbox(from),
        to: mailbox(to),
        cc: p.cc?.map(mailbox),
        bcc: p.bcc?.map(mailbox),
        reply_to: mail.reply_to && mailbox(mail.reply_to),
        subject: p.subject ?? mail.subject,
        html,
        text,
        template: mail.template_id,
        data: Object.keys(data).length > 0 ? data : undefined,
        headers: Object.keys(headers).length > 0 ? headers : undefined,
        tags: tags.length > 0 ? tags : undefined,
        send_at: sendAt === undefined ? undefined : scheduledAt(new Date(sendAt * 1000), now),
        attachments: mail.attachments?.length ?? 0,
        sandbox: sandboxMode(mail) || undefined,
        ...tracking,
      };
      items.push({ draft, keySuffix: `${i}:${j}`, personalization: i, to: j, own });
    });
  });
  if (problems.length > 0) throw invalid(problems);
  return items;
}

/** text/plain and text/html parts; a text-only send gets an HTML part made from its text. */
function bodiesOf(mail: SendGridMail): { html?: string; text?: string } {
  const text = mail.content?.find((c) => c.type === 'text/plain')?.value;
  const html = mail.content?.find((c) => c.type === 'text/html')?.value;
  return { text, html: html ?? (text !== undefined && mail.template_id === undefined ? htmlFromText(text) : undefined) };
}

function contentProblems(mail: SendGridMail): ErrorDetail[] {
  if (!mail.content?.length) {
    return mail.template_id === undefined
      ? [{ field: 'content', message: 'Unless a valid template_id is provided, the content parameter is required.' }]
      : [];
  }
  const seen = new Set<string>();
  return mail.content.flatMap((c, i): ErrorDetail[] => {
    const field = `content.${i}.type`;
    if (c.type !== 'text/plain' && c.type !== 'text/html') {
      return [{ field, message: 'Gatepost sends text/plain and text/html content only.' }];
    }
    if (seen.has(c.type)) return [{ field, message: `Only one ${c.type} content is allowed.` }];
    seen.add(c.type);
    return [];
  });
}

/** Settings that ask for something Gatepost does not do are refused, never ignored. */
function settingProblems(mail: SendGridMail): ErrorDetail[] {
  return (['mail_settings', 'tracking_settings'] as const).flatMap((group) =>
    Object.entries(mail[group] ?? {})
      .filter(
        ([name, setting]) =>
          setting.enable === true &&
          !(group === 'mail_settings' && name === 'sandbox_mode') &&
          !(group === 'tracking_settings' && name in TRACKING),
      )
      .map(([name]) => ({
        field: `${group}.${name}.enable`,
        message: 'Gatepost does not support this setting; only enable: false is accepted.',
      })),
  );
}

function personalizationProblems(p: Personalization, i: number): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const e of [...p.to, ...(p.cc ?? []), ...(p.bcc ?? [])]) {
    const address = e.email.trim().toLowerCase();
    if (seen.has(address)) {
      problems.push({
        field: `personalizations.${i}`,
        message: `Each email address in the personalization block should be unique between to, cc, and bcc; ${e.email} is there twice.`,
      });
    }
    seen.add(address);
  }
  for (const key of Object.keys(p.substitutions ?? {})) {
    if (!SUBSTITUTION_KEY.test(key)) {
      problems.push({
        field: `personalizations.${i}.substitutions`,
        message: `Gatepost takes substitution keys of the form {{name}} only; "${key}" is not one.`,
      });
    }
  }
  return problems;
}

/** `{"{{name}}": "Ann"}` → `{name: "Ann"}`: the renderer fills {{name}} as SendGrid would. */
function substitutionData(p: Personalization): Record<string, string> {
  return Object.fromEntries(
    Object.entries(p.substitutions ?? {}).flatMap(([key, value]) => {
      const m = SUBSTITUTION_KEY.exec(key);
      return m ? [[m[1]!, value]] : [];
    }),
  );
}

/** A field the gate names in a message's terms, in the request's terms. */
function fieldIn(item: SendGridItem, field: string): string {
  const p = `personalizations.${item.personalization}`;
  const copy = /^(cc|bcc)(?:\[(\d+)\])?$/.exec(field);
  if (field === 'to') return `${p}.to.${item.to}.email`;
  if (copy) return copy[2] === undefined ? `${p}.${copy[1]}` : `${p}.${copy[1]}.${copy[2]}.email`;
  if (field === 'from') return item.own.has('from') ? `${p}.from.email` : 'from.email';
  if (field === 'reply_to') return 'reply_to.email';
  if (field === 'html' || field === 'text') return item.draft.template === undefined ? 'content' : 'template_id';
  if (field === 'template') return 'template_id';
  return item.own.has(field) ? `${p}.${field}` : field;
}

/** A refusal of one message, its fields named as the request named them. */
export function inRequestTerms(error: GatepostError, item: SendGridItem): GatepostError {
  return new GatepostError(error.code, error.message, {
    details: error.details?.map((d) => ({ ...d, field: fieldIn(item, d.field) })),
    retryAfter: error.retryAfter,
  });
}
