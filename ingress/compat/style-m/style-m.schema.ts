// Style M (Mailgun messages API): the form parameters and the answers, as zod schemas that
// validate the request and describe it in the OpenAPI document.
import { z } from 'zod';

/** Mailgun's own limits: recipients of one request (batch sending), tags of one message. */
export const MAX_RECIPIENTS = 1000;
export const MAX_TAGS = 3;

/** Parameters that may be given more than once; any other must be given at most once. */
export const REPEATABLE = new Set(['to', 'cc', 'bcc', 'o:tag']);

const Addresses = (what: string, min = 0) =>
  z
    .array(z.string())
    .min(min)
    .meta({ description: `${what}: repeat the parameter, or give a comma-separated list.` });

const YesNo = z
  .string()
  .toLowerCase()
  .pipe(z.enum(['yes', 'no', 'true', 'false'], { error: 'must be yes or no' }));

/** Mailgun's click tracking also takes `htmlonly`: Gatepost tracks the html's links only, so it is `yes`. */
const ClickTracking = z
  .string()
  .toLowerCase()
  .pipe(z.enum(['yes', 'no', 'true', 'false', 'htmlonly'], { error: 'must be yes, no or htmlonly' }));

export const MailgunMessage = z
  .object({
    from: z
      .string()
      .optional()
      .meta({ description: "The sender; defaults to the template's, then the tenant's default sender." }),
    to: Addresses('Recipients; each gets a message of its own', 1),
    cc: Addresses('Copies, on every message').optional(),
    bcc: Addresses('Blind copies, on every message').optional(),
    subject: z.string().optional(),
    text: z.string().optional().meta({ description: 'A text-only message gets an HTML part made from the text.' }),
    html: z.string().optional(),
    template: z.string().min(1).max(128).optional().meta({ description: 'The slug of a Gatepost template.' }),
    't:variables': z.string().optional().meta({ description: 'JSON object: merge variables of the template.' }),
    't:text': YesNo.optional().meta({ description: 'Accepted; Gatepost always sends a text part.' }),
    'recipient-variables': z
      .string()
      .optional()
      .meta({ description: 'JSON object by recipient address: fills %recipient.name% (and {{recipient.name}}) per recipient.' }),
    'o:tag': z
      .array(z.string().min(1).max(128))
      .max(MAX_TAGS, `allows at most ${MAX_TAGS} tags per message`)
      .optional()
      .meta({ description: 'Kept as tags.' }),
    'o:deliverytime': z
      .string()
      .refine((v) => !Number.isNaN(Date.parse(v)), 'is not a valid RFC 2822 date')
      .optional()
      .meta({ description: 'Schedule the send (RFC 2822 date); a time not in the future sends at once. At most 30 days ahead.' }),
    'o:testmode': YesNo.optional().meta({
      description: 'yes: the messages are captured, not delivered (as with a sandbox key).',
    }),
    'o:tracking': YesNo.optional().meta({ description: 'Open and click tracking together (docs/tracking.md); off by default.' }),
    'o:tracking-clicks': ClickTracking.optional().meta({
      description: "Click tracking of the html's links; wins over o:tracking.",
    }),
    'o:tracking-opens': YesNo.optional().meta({ description: 'Open tracking; wins over o:tracking.' }),
  })
  .catchall(z.string())
  .meta({
    description:
      'A Mailgun message. Also `h:<Header>` (extra headers; `h:Reply-To` sets the reply address, `h:X-Mailgun-Variables` is JSON merge variables) and `v:<name>` (custom data, sent in X-Mailgun-Variables as Mailgun does). Attachments (`attachment`, `inline`) are refused, never dropped; any other parameter is refused as unsupported.',
  });

export type MailgunMessage = z.infer<typeof MailgunMessage>;

export const MailgunMimeMessage = MailgunMessage.pick({
  to: true,
  'o:tag': true,
  'o:deliverytime': true,
  'o:testmode': true,
  'o:tracking': true,
  'o:tracking-clicks': true,
  'o:tracking-opens': true,
})
  .extend({
    message: z.string().meta({
      description:
        'The whole MIME message (a file or a value): its From, Reply-To, Subject, text and html parts and headers are sent; its To and Cc are shown as written.',
    }),
  })
  .catchall(z.string())
  .meta({
    description:
      "A MIME message, as Mailgun takes it. Also `v:<name>` (custom data, sent in X-Mailgun-Variables). The recipients are the `to` parameters, not the message's headers. A message with attachments is refused, never sent without them; any other parameter is refused as unsupported.",
  });

/** A `messages.mime` request's parameters, the MIME message (read apart) left out. */
export const MimeParameters = MailgunMimeMessage.omit({ message: true });
export type MimeParameters = z.infer<typeof MimeParameters>;

export const MailgunQueued = z.object({
  id: z.string().meta({ description: "<msg_…@domain>: the first message id, in Mailgun's form." }),
  message: z.literal('Queued. Thank you.'),
});

export const MailgunErrorBody = z
  .object({ message: z.string() })
  .meta({ description: "Mailgun's error body. The `Gatepost-Error-Code` header carries the Gatepost code." });

/** Mailgun answers a bad key with a plain-text 401. */
export const Forbidden = z.literal('Forbidden');
