// The Style P wire format (Postmark's email API): PascalCase messages, templated messages and
// the `{ErrorCode, Message}` answers. The single source for validation, types and the OpenAPI
// document of the Style P routes.
import { z } from 'zod';

/** Postmark's own limit: 500 messages in one batch call. */
export const MAX_BATCH = 500;
/** Postmark's own limit: To, Cc and Bcc of one message name at most 50 addresses in all. */
export const MAX_RECIPIENTS = 50;

// Some Postmark clients (the .NET and Java ones) write unset fields as null: null means absent.
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

const AddressList = z
  .string()
  .max(20_000)
  .meta({ description: 'One address or several, comma-separated: "a@example.com, Bob <b@example.com>".' });

export const TrackLinks = z.enum(['None', 'HtmlAndText', 'HtmlOnly', 'TextOnly']);

/** The fields a plain message and a templated message share. */
const common = {
  From: optional(
    z.string().max(998).meta({ description: "The sender; defaults to the template's, then the tenant's default sender." }),
  ),
  To: optional(
    AddressList.meta({
      description:
        'The recipients, comma-separated. Each address becomes a message of its own (spec part 2), carrying the Cc and Bcc.',
    }),
  ),
  Cc: optional(AddressList.meta({ description: 'Copied on every message fanned out from To.' })),
  Bcc: optional(AddressList.meta({ description: 'Blind-copied on every message fanned out from To.' })),
  ReplyTo: optional(z.string().max(998)),
  Tag: optional(z.string().min(1).max(1000).meta({ description: "Kept as the message's tag, shown on its timeline." })),
  Headers: optional(
    z
      .array(z.object({ Name: z.string().min(1), Value: z.string() }).strict())
      .meta({ description: 'Extra mail headers. From, To, Subject, Message-ID and the like are set by Gatepost.' }),
  ),
  Metadata: optional(
    z
      .record(z.string().regex(/^[!-9;-~]{1,50}$/, 'printable ASCII without spaces or colons, at most 50 characters'), z.string())
      .meta({ description: 'Kept with the message as X-PM-Metadata-<key> headers.' }),
  ),
  MessageStream: optional(
    z.string().meta({ description: '"outbound" (the default) or "transactional": transactional; "broadcast": broadcast.' }),
  ),
  TrackOpens: optional(
    z
      .boolean()
      .meta({ description: "Open tracking (email.opened); by default the stream's: on for broadcast, off for outbound." }),
  ),
  TrackLinks: optional(
    TrackLinks.meta({
      description:
        "Click tracking: HtmlOnly and HtmlAndText track the html's links (the text part keeps its own), TextOnly and None track none. By default the stream's.",
    }),
  ),
  Attachments: optional(
    z.array(z.unknown()).meta({
      description: 'Not supported: a message with attachments is refused (ErrorCode 300), never sent without them.',
    }),
  ),
};

export const StylePMessage = z
  .object({
    ...common,
    Subject: optional(z.string().max(998)),
    HtmlBody: optional(z.string()),
    TextBody: optional(z.string().meta({ description: 'Without HtmlBody, the HTML part shows this text as written.' })),
  })
  .strict()
  .meta({ description: 'One Style P message: give HtmlBody, TextBody or both. Sent as written: no placeholders are filled.' });
export type StylePMessage = z.output<typeof StylePMessage>;

export const StylePTemplatedMessage = z
  .object({
    ...common,
    TemplateId: optional(z.number().int().positive().meta({ description: 'Names the template whose slug is this number.' })),
    TemplateAlias: optional(z.string().min(1).max(128).meta({ description: 'Names the template whose slug is this alias.' })),
    TemplateModel: optional(
      z.record(z.string(), z.unknown()).meta({ description: "The merge data for the template's placeholders." }),
    ),
    InlineCss: optional(z.boolean().meta({ description: 'Accepted; style blocks are left as written.' })),
  })
  .strict()
  .meta({ description: 'One Style P message made from a stored template: give TemplateId or TemplateAlias.' });
export type StylePTemplatedMessage = z.output<typeof StylePTemplatedMessage>;

/** Validates a batch as a whole; each message is then validated, and refused, on its own. */
export const BatchOf = z.array(z.unknown()).min(1);
export const TemplatedBatchOf = z.object({ Messages: BatchOf }).strict();

export const StylePResult = z
  .object({
    ErrorCode: z.number().int().meta({ description: '0 on success; see docs/compat-style-p.md for the others.' }),
    Message: z.string(),
    To: z.string().optional(),
    SubmittedAt: z.string().optional().meta({ description: 'ISO 8601.' }),
    MessageID: z
      .string()
      .optional()
      .meta({ description: "The Gatepost message id (msg_…), for GET /v1/messages/:id. With several To, the first one's." }),
    Recipients: z
      .array(
        z.object({
          To: z.string(),
          ErrorCode: z.number().int(),
          Message: z.string(),
          MessageID: z.string().optional(),
        }),
      )
      .optional()
      .meta({ description: 'Gatepost only, when To names several addresses: the message made for each.' }),
  })
  .meta({ description: 'The answer for one message.' });
export type StylePResult = z.infer<typeof StylePResult>;

export const StylePError = z
  .object({ ErrorCode: z.number().int(), Message: z.string() })
  .meta({ description: 'A refused request: ErrorCode 10 bad token, 300 invalid request, 406 inactive recipient, …' });
export type StylePError = z.infer<typeof StylePError>;
