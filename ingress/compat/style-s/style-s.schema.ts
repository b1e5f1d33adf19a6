// Style S (SendGrid v3 Mail Send): the request body and the answers, as zod schemas that validate
// the request and describe it in the OpenAPI document.
import { z } from 'zod';

/** SendGrid's own limits on one request. */
export const MAX_PERSONALIZATIONS = 1000;
export const MAX_RECIPIENTS_PER_REQUEST = 1000;
export const MAX_CATEGORIES = 10;

const EmailObject = z
  .object({
    email: z.string().min(1),
    name: z.string().nullish(),
  })
  .strict()
  .meta({ description: '{"email", "name"}: one mailbox.' });

export type EmailObject = z.infer<typeof EmailObject>;

const Headers = z.record(z.string(), z.string());
const CustomArgs = z
  .record(z.string(), z.string())
  .meta({ description: 'Kept on the message as tags `name:value` (they never reach the recipient).' });
const SendAt = z
  .number()
  .int()
  .nonnegative()
  .meta({ description: 'Unix seconds; a time not in the future sends at once. At most 30 days ahead.' });

/** A tracking or mail setting: only `enable: false` is accepted, except `mail_settings.sandbox_mode`. */
const Setting = z.looseObject({ enable: z.boolean().optional() });

export const Personalization = z
  .object({
    to: z
      .array(EmailObject)
      .min(1, 'The to array is required for all personalization objects, and must have at least one email.'),
    cc: z.array(EmailObject).optional(),
    bcc: z.array(EmailObject).optional(),
    from: EmailObject.optional().meta({ description: 'Overrides the top-level from for this personalization.' }),
    subject: z.string().optional().meta({ description: 'Overrides the top-level subject.' }),
    headers: Headers.optional(),
    substitutions: z.record(z.string(), z.string()).optional().meta({
      description: 'Only `{{name}}` keys (what @sendgrid/mail sends): they become the merge variable `name`.',
    }),
    dynamic_template_data: z.record(z.string(), z.unknown()).optional().meta({ description: 'Merge variables.' }),
    custom_args: CustomArgs.optional(),
    send_at: SendAt.optional(),
  })
  .strict()
  .meta({ description: 'Recipients and their variables: one message per `to` address, each with this cc and bcc.' });

export type Personalization = z.infer<typeof Personalization>;

export const SendGridMail = z
  .object({
    personalizations: z
      .array(Personalization)
      .min(1, 'You must have at least one personalization.')
      .max(MAX_PERSONALIZATIONS, `The personalization block is limited to ${MAX_PERSONALIZATIONS} personalizations per request.`),
    from: EmailObject.optional().meta({
      description: "The sender; defaults to the template's, then the tenant's default sender.",
    }),
    reply_to: EmailObject.optional(),
    subject: z.string().optional(),
    content: z
      .array(z.object({ type: z.string(), value: z.string().min(1) }).strict())
      .optional()
      .meta({ description: 'text/plain and text/html parts; a text-only send gets an HTML part made from the text.' }),
    template_id: z.string().min(1).max(128).optional().meta({ description: 'The slug of a Gatepost template.' }),
    headers: Headers.optional(),
    categories: z.array(z.string().min(1).max(255)).max(MAX_CATEGORIES).optional().meta({ description: 'Kept as tags.' }),
    custom_args: CustomArgs.optional(),
    send_at: SendAt.optional(),
    attachments: z.array(z.unknown()).optional().meta({
      description: 'Not supported: a send with attachments is refused (400, field `attachments`), never sent without them.',
    }),
    mail_settings: z
      .record(z.string(), Setting)
      .optional()
      .meta({ description: '`sandbox_mode.enable: true` captures the messages instead of delivering them (answer 200).' }),
    tracking_settings: z.record(z.string(), Setting).optional().meta({
      description:
        '`click_tracking`, `open_tracking` and `subscription_tracking` (List-Unsubscribe) switch tracking on or off (docs/tracking.md); any other setting accepts only `enable: false`.',
    }),
  })
  .strict()
  .superRefine((mail, ctx) => {
    const recipients = mail.personalizations.reduce((n, p) => n + p.to.length + (p.cc?.length ?? 0) + (p.bcc?.length ?? 0), 0);
    if (recipients > MAX_RECIPIENTS_PER_REQUEST) {
      ctx.addIssue({
        code: 'custom',
        path: ['personalizations'],
        message: `There is a limit of ${MAX_RECIPIENTS_PER_REQUEST} total recipients (to + cc + bcc) per request.`,
      });
    }
  })
  .meta({ description: 'A SendGrid v3 mail send. Fields Gatepost does not support are refused (400), never ignored.' });

export type SendGridMail = z.infer<typeof SendGridMail>;

/** One entry of SendGrid's error list. */
export const SendGridErrorEntry = z.object({
  message: z.string(),
  field: z.string().nullable(),
  help: z.string().nullable(),
});

export type SendGridErrorEntry = z.infer<typeof SendGridErrorEntry>;

export const SendGridErrorBody = z
  .object({ errors: z.array(SendGridErrorEntry) })
  .meta({ description: "SendGrid's error body. The `Gatepost-Error-Code` header carries the Gatepost code." });

/** 202 and 200 (sandbox mode) have an empty body, as SendGrid's do. */
export const EmptyBody = z.literal('').meta({ description: 'Empty.' });
