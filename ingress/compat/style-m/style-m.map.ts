// Style M: a Mailgun message as Gatepost SendDrafts. A Gatepost message has exactly one `to`, so
// every recipient gets a message of its own (as Mailgun's batch sending does), each carrying the
// cc and bcc. Parameters at fault are named as Mailgun names them.
import { GatepostError, invalid, type ErrorDetail } from '../../../errors/errors.catalog.ts';
import type { SendDraft } from '../../../gate/gate.ts';
import { controlCharacterProblems, parseMailbox, splitAddressList } from '../../../mail/address.ts';
import { htmlFromText } from '../../../mail/content.ts';
import { zodDetails } from '../../rest/errors.http.ts';
import { scheduledAt, type FannedOut } from '../compat.admission.ts';
import type { Form } from './style-m.form.ts';
import type { ParsedMail } from 'mailparser';
import type { z } from 'zod';
import { submissionItems } from '../../smtp/submission.drafts.ts';
import { MAX_RECIPIENTS, MailgunMessage, MimeParameters, REPEATABLE } from './style-m.schema.ts';

export interface MailgunItem extends FannedOut {
  /** This message's recipient, as the request gave it. */
  recipient: string;
}

const VARIABLES_HEADER = 'X-Mailgun-Variables';
// Mailgun's recipient variables, %recipient.name%, as the renderer's placeholders.
const RECIPIENT_VARIABLE = /%recipient\.([A-Za-z0-9_-]+)%/g;

/**
 * The form as `schema` takes it: repeatable parameters as lists, the others given once; a
 * parameter neither in the schema nor `open` (h:…, v:…) is refused as unsupported.
 */
function parseForm<S extends z.ZodObject>(form: Form, schema: S, open: RegExp): z.output<S> {
  const problems: ErrorDetail[] = [];
  // No prototype: a parameter named __proto__ is a key like any other, and refused as unknown.
  const input: Record<string, string | string[]> = Object.create(null);
  for (const [name, values] of form.values) {
    if (REPEATABLE.has(name)) input[name] = values;
    else if (values.length > 1) problems.push({ field: name, message: 'must be given once' });
    else input[name] = values[0]!;
  }
  for (const name of Object.keys(input)) {
    if (!Object.hasOwn(schema.shape, name) && !open.test(name))
      problems.push({ field: name, message: 'is not supported by Gatepost' });
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    problems.push(...zodDetails(parsed.error).map((d) => (input[d.field] === undefined ? { ...d, message: 'is missing' } : d)));
  }
  if (problems.length > 0) throw invalid(problems);
  return parsed.data!;
}

export const messageParameters = (form: Form): MailgunMessage => parseForm(form, MailgunMessage, /^[hv]:./);

/** A `messages.mime` request's parameters: the MIME message itself is not among them. */
export const mimeParameters = (form: Form): MimeParameters => parseForm(form, MimeParameters, /^v:./);

function jsonObject(name: string, text: string | undefined, problems: ErrorDetail[]): Record<string, unknown> {
  if (text === undefined) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // not JSON: refused below
  }
  problems.push({ field: name, message: 'must be a JSON object' });
  return {};
}

const prefixed = (message: Record<string, unknown>, prefix: string) =>
  Object.entries(message)
    .filter(([name]) => name.startsWith(prefix))
    .map(([name, value]) => [name.slice(prefix.length), value as string] as const);

/** The recipients of a request: every `to`, lists split; none, or more than Mailgun takes, is a problem. */
function recipientsOf(to: string[], problems: ErrorDetail[]): string[] {
  const recipients = to.flatMap(splitAddressList);
  if (recipients.length === 0) problems.push({ field: 'to', message: 'is missing' });
  if (recipients.length > MAX_RECIPIENTS) problems.push({ field: 'to', message: `allows at most ${MAX_RECIPIENTS} recipients` });
  return recipients;
}

/** The h:Reply-To parameter, whatever the case of its name. */
const replyToOf = (message: MailgunMessage): string | undefined =>
  prefixed(message, 'h:').find(([name]) => name.toLowerCase() === 'reply-to')?.[1];

/** In a batch send, Mailgun's %recipient.name% placeholders become the recipient's own variables. */
function placeholders(source: string | undefined, batch: boolean): string | undefined {
  return batch ? source?.replace(RECIPIENT_VARIABLE, '{{recipient.[$1]}}') : source;
}

/** Cc or Bcc: each field may hold a comma-separated list. */
function copies(list: string[] | undefined): string[] | undefined {
  return list ? list.flatMap(splitAddressList) : undefined;
}

/** A yes/no option: true, false, or undefined when not given. */
const yes = (value: string | undefined) => (value === undefined ? undefined : value !== 'no' && value !== 'false');

/** What the `o:` options make of every message of a request. */
function options(
  parameters: Pick<
    MailgunMessage,
    'o:tag' | 'o:deliverytime' | 'o:testmode' | 'o:tracking' | 'o:tracking-clicks' | 'o:tracking-opens'
  >,
  now: number,
) {
  const sendAt = parameters['o:deliverytime'];
  const tracking = yes(parameters['o:tracking']);
  return {
    tags: parameters['o:tag'],
    send_at: sendAt === undefined ? undefined : scheduledAt(new Date(sendAt), now),
    sandbox: yes(parameters['o:testmode']) || undefined,
    track_clicks: yes(parameters['o:tracking-clicks']) ?? tracking,
    track_opens: yes(parameters['o:tracking-opens']) ?? tracking,
  } satisfies SendDraft;
}

/** The messages of a request, one per recipient, in the order the recipients were given. */
export function itemsOf(message: MailgunMessage, attachments: number, now = Date.now()): MailgunItem[] {
  const { to, cc, bcc, from } = message;
  const problems = controlCharacterProblems({ to, cc, bcc, from, 'h:Reply-To': replyToOf(message) });
  if (problems.length > 0) throw invalid(problems);
  const recipients = recipientsOf(message.to, problems);
  if (message.html === undefined && message.text === undefined && message.template === undefined) {
    problems.push({ field: '', message: "Need at least one of 'text', 'html' or 'template' parameters specified" });
  }
  const headers: Record<string, string> = {};
  let replyTo: string | undefined;
  let headerVariables: Record<string, unknown> = {};
  for (const [name, value] of prefixed(message, 'h:')) {
    if (name.toLowerCase() === 'reply-to') replyTo = value;
    else if (name.toLowerCase() === VARIABLES_HEADER.toLowerCase()) headerVariables = jsonObject(`h:${name}`, value, problems);
    else headers[name] = value;
  }
  const templateVariables = jsonObject('t:variables', message['t:variables'], problems);
  const recipientVariables = jsonObject('recipient-variables', message['recipient-variables'], problems);
  if (problems.length > 0) throw invalid(problems);
  // Mailgun's custom data (v:) travels in the X-Mailgun-Variables header, as Mailgun sends it.
  const variables = { ...headerVariables, ...Object.fromEntries(prefixed(message, 'v:')) };
  if (Object.keys(variables).length > 0) headers[VARIABLES_HEADER] = JSON.stringify(variables);

  const batch = message['recipient-variables'] !== undefined;
  // Addresses are matched whatever their case, as suppression matches them.
  const byAddress = new Map(Object.entries(recipientVariables).map(([address, vars]) => [address.toLowerCase(), vars]));
  const text = placeholders(message.text, batch);
  const html =
    placeholders(message.html, batch) ?? (text !== undefined && message.template === undefined ? htmlFromText(text) : undefined);
  const common = options(message, now);

  return recipients.map((recipient, i) => {
    const data = {
      ...variables,
      ...templateVariables,
      ...(batch ? { recipient: byAddress.get((parseMailbox(recipient)?.address ?? recipient).toLowerCase()) ?? {} } : {}),
    };
    const draft: SendDraft = {
      from: message.from,
      to: recipient,
      cc: copies(message.cc),
      bcc: copies(message.bcc),
      reply_to: replyTo,
      subject: placeholders(message.subject, batch),
      html,
      text,
      template: message.template,
      data: Object.keys(data).length > 0 ? data : undefined,
      headers: Object.keys(headers).length > 0 ? headers : undefined,
      ...common,
      attachments,
    };
    return { draft, keySuffix: String(i), recipient };
  });
}

/**
 * The messages of a `messages.mime` request: the MIME message read as SMTP submission reads it
 * (its From, Reply-To, Subject, parts and headers; its To and Cc shown as written), one message
 * per `to` parameter, with the request's options.
 */
export function mimeItemsOf(parameters: MimeParameters, mail: ParsedMail, attachments: number, now = Date.now()): MailgunItem[] {
  const problems = controlCharacterProblems({ to: parameters.to });
  const recipients = recipientsOf(parameters.to, problems);
  if (problems.length > 0) throw invalid(problems);
  const { items } = submissionItems(mail, { mailFrom: null, rcptTo: recipients });
  const variables = Object.fromEntries(prefixed(parameters, 'v:'));
  const common = options(parameters, now);
  return items.map(({ draft }, i) => ({
    draft: {
      ...draft,
      ...(Object.keys(variables).length > 0
        ? { headers: { ...draft.headers, [VARIABLES_HEADER]: JSON.stringify(variables) } }
        : {}),
      ...common,
      attachments: draft.attachments! + attachments,
    },
    keySuffix: String(i),
    recipient: recipients[i]!,
  }));
}

/** The Mailgun parameter a field the gate names in a message's terms came from. */
function parameterOf(field: string): string {
  const copy = /^(cc|bcc)\b/.exec(field);
  if (copy) return copy[1]!;
  if (field === 'reply_to') return 'h:Reply-To';
  if (field === 'send_at') return 'o:deliverytime';
  if (field.startsWith('headers.')) return `h:${field.slice('headers.'.length)}`;
  return field;
}

/** A refusal of one message, its fields named as the request named them. */
export function inRequestTerms(error: GatepostError, item: MailgunItem): GatepostError {
  return new GatepostError(error.code, error.message, {
    details: error.details?.map((d) => ({
      field: parameterOf(d.field),
      message: d.field === 'to' ? `${d.message} (${item.recipient})` : d.message,
    })),
    retryAfter: error.retryAfter,
  });
}
