// The native API's request and response schemas: the single source for validation, types and
// the OpenAPI document.
import { z } from 'zod';
import { MAX_HEADERS } from '../../mail/policy.ts';
import { DEFAULT_BROWSER_RATE } from '../../tenancy/keys.ts';

export const IdempotencyKey = z
  .string()
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'one to 255 printable ASCII characters, no spaces')
  .meta({ description: 'Makes retries safe: kept 90 days per tenant; a repeat returns the first response.' });

export const Address = z
  .string()
  .min(3)
  .max(998)
  .meta({ description: 'An address, optionally with a name: "Ann <ann@example.com>".' });

export const SendRequest = z
  .object({
    from: Address.optional().meta({ description: "The sender; defaults to the template's, then the tenant's default sender." }),
    to: Address.optional().meta({ description: 'The recipient. Required unless the template stores one.' }),
    reply_to: Address.optional(),
    subject: z
      .string()
      .max(998)
      .optional()
      .meta({ description: 'Required unless a template is used. May hold {{placeholders}}.' }),
    html: z
      .string()
      .optional()
      .meta({ description: 'HTML body; may hold {{placeholders}} (HTML-escaped). Required unless a template is used.' }),
    text: z.string().optional().meta({ description: 'Plain-text body; generated from the html when absent.' }),
    template: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: 'A template slug: its subject, html and text are used.' }),
    data: z.record(z.string(), z.unknown()).optional().meta({ description: 'Merge variables for {{placeholders}}.' }),
    idempotency_key: IdempotencyKey.optional(),
    send_at: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Schedule the send: an ISO 8601 time, in the future and at most 30 days ahead.' }),
    stream: z.enum(['transactional', 'broadcast']).optional().meta({ description: 'Defaults to transactional.' }),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .meta({
        description: `Extra headers (at most ${MAX_HEADERS}); From, To, Subject, Message-ID and the like are set by Gatepost.`,
      }),
    tags: z
      .array(z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'letters, digits, _ . : - and at most 64 characters'))
      .max(10)
      .optional(),
    track_opens: z.boolean().optional().meta({
      description:
        'Put an open pixel in the html (email.opened). Defaults to true on the broadcast stream, false on transactional.',
    }),
    track_clicks: z.boolean().optional().meta({
      description:
        "Send the html's web links through Gatepost (email.clicked, then a 302 to the link). Defaults to true on the broadcast stream, false on transactional.",
    }),
    list_unsubscribe: z.boolean().optional().meta({
      description:
        'Add List-Unsubscribe (https and mailto) and List-Unsubscribe-Post (RFC 8058). Defaults to true on the broadcast stream, false on transactional. `{{unsubscribe_url}}` is filled either way.',
    }),
    attachments: z.array(z.unknown()).optional().meta({
      description: 'Not supported: a send with attachments is refused (422 attachments_unsupported), never sent without them.',
    }),
  })
  .strict()
  .meta({ description: 'One email. Give html and subject, or a template.' });

export type SendRequest = z.infer<typeof SendRequest>;

export const SendResponse = z.object({
  id: z.string().meta({ description: 'The message id, msg_…' }),
  status: z.enum(['queued', 'scheduled']),
  to: z.string(),
  created_at: z.string(),
  send_at: z.string().nullable(),
  sandbox: z.boolean().meta({ description: 'True for sandbox keys: the message is captured, not delivered.' }),
});

export const MAX_BATCH = 500;

/** Validates the batch as a whole; each item is then validated, and refused, on its own. */
export const BatchRequest = z.array(z.unknown()).min(1).max(MAX_BATCH, `at most ${MAX_BATCH} messages in one batch`);

/** How the batch is documented: what each item must be. */
export const BatchRequestDoc = z
  .array(SendRequest)
  .min(1)
  .max(MAX_BATCH)
  .meta({ description: `Up to ${MAX_BATCH} send requests, each as for POST /v1/emails; each passes the gate on its own.` });

export const BatchItemResult = z.union([
  SendResponse.extend({ index: z.number().int(), replayed: z.boolean() }),
  z.object({
    index: z.number().int(),
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    }),
  }),
]);

export const BatchResponse = z.object({
  results: z.array(BatchItemResult).meta({ description: 'One result per item, in request order.' }),
  accepted: z.number().int(),
  refused: z.number().int(),
});

export const EventEnvelope = z.object({
  id: z.string().meta({ description: 'evt_…; the idempotency handle for receivers' }),
  type: z.string(),
  created_at: z.string(),
  data: z.record(z.string(), z.unknown()).meta({
    description:
      "The event's facts, with message_id. A delivery attempt (email.sent, email.bounced, message.deferred) carries to, attempt, " +
      'the whole reply (smtp_code, enhanced_code, response), who answered (mx, ip), tls ({version, cipher} or null), ' +
      'connected_at and accepted_at, stage (connect|mail|rcpt|data, null when accepted), recipients (a live transaction: one per recipient domain, or one for all through a relay) and domain (when they are on one), sending_domain (the verified From domain, when there is one), source_ip (the local address it went from, when GATEPOST_SOURCE_IPS lists any); then sandbox and receipt ({id, jws}, when delivered) (email.sent), bounce_type hard|soft|block (email.bounced) or retry_at (message.deferred).',
  }),
});

export const MessageView = z.object({
  id: z.string(),
  status: z.enum(['held', 'scheduled', 'queued', 'deferred', 'sent', 'bounced']),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  stream: z.enum(['transactional', 'broadcast']),
  sandbox: z.boolean(),
  tags: z.array(z.string()),
  idempotency_key: z.string().nullable(),
  message_id_header: z.string(),
  created_at: z.string(),
  send_at: z.string().nullable(),
  events: z.array(EventEnvelope).meta({ description: 'The full event history, oldest first.' }),
});

export const IdParam = z.object({ id: z.string().min(1).max(128) });

export const Slug = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, "letters, digits, . _ : - (a former provider's template id or alias fits)");

const TemplateBody = {
  slug: Slug,
  name: z.string().max(200).nullable().optional(),
  // A line break in a stored subject would end the Subject header of every message it renders.
  subject: z
    .string()
    .min(1)
    .max(998)
    .refine((s) => !/[\r\n]/.test(s), 'must not contain CR or LF'),
  html: z.string().min(1),
  text: z.string().nullable().optional(),
  from: Address.nullable().optional(),
  to: Address.nullable().optional().meta({ description: 'A literal recipient (no placeholders), for the browser SDK.' }),
  reply_to: Address.nullable().optional(),
};

export const TemplateCreate = z.object(TemplateBody).strict();
export const TemplateUpdate = z.object(TemplateBody).partial().strict();

export const TemplateView = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string().nullable(),
  subject: z.string(),
  html: z.string(),
  text: z.string().nullable(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  reply_to: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const SlugParam = z.object({ slug: Slug });

export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(500).optional(),
});

export const pageOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), next_cursor: z.string().nullable() });

/** A whole, unpaged list. */
export const listOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });

export const SuppressionView = z.object({
  address: z.string(),
  reason: z.enum(['hard_bounce', 'complaint', 'unsubscribe', 'manual']),
  detail: z.string().nullable(),
  created_at: z.string(),
});

/** A message received at one of the tenant's return-path domains (docs/bounces.md). */
export const ReportView = z.object({
  id: z.string().meta({ description: '`rpt_…`' }),
  rcpt: z.string().meta({
    description:
      'The envelope recipient: a VERP address (`b+msg_…@bounces.<domain>`) or the feedback-loop address (`fbl@bounces.<domain>`).',
  }),
  mail_from: z.string().meta({ description: "The envelope sender; `''` for the null reverse-path of a DSN." }),
  remote_address: z.string(),
  received_at: z.string(),
  kind: z.enum(['dsn', 'arf', 'plain', 'unknown']).meta({
    description:
      '`dsn` (RFC 3464), `arf` (RFC 5965), `plain` (a bounce in no standard format, read by its status code), `unknown`.',
  }),
  outcome: z.enum(['recorded', 'repeat', 'unrecognised']).meta({
    description: '`recorded` on its message, `repeat` (recorded already), or `unrecognised`: kept, with `reason`.',
  }),
  message_id: z.string().nullable().meta({ description: 'The message it was tied to, or named; null when none.' }),
  reason: z.string().nullable().meta({ description: 'Why it was not tied to a message; null when it was.' }),
  findings: z
    .record(z.string(), z.unknown())
    .meta({ description: 'What the parser found: recipients, statuses, diagnostics, the feedback, the original headers.' }),
  excerpt: z.string().nullable().meta({ description: 'The first 2,048 bytes of an unrecognised message; null for the others.' }),
  size: z.number().int(),
});

/** The same, for the operator: with the tenant whose return-path domain it arrived at (null: no tenant's). */
export const AdminReportView = ReportView.extend({ tenant_id: z.string().nullable() });

export const SuppressionCreate = z
  .object({
    address: z.string().min(3).max(254),
    reason: z.enum(['manual', 'unsubscribe', 'complaint']).default('manual'),
    detail: z.string().max(1000).nullable().optional(),
  })
  .strict();

export const AddressParam = z.object({ address: z.string().min(3).max(254) });

/** Longer text is refused (400); up to it, an address too long to be one is a verdict, not an error. */
const MAX_VALIDATED = 1024;
export const MAX_VALIDATE_BATCH = 1000;

const ValidatedAddress = z
  .string()
  .max(MAX_VALIDATED)
  .meta({ description: 'The address to check, bare (ann@example.com), as it would be sent to.' });

export const ValidateRequest = z.object({ address: ValidatedAddress }).strict();

export const ValidateBatchRequest = z
  .object({
    addresses: z.array(ValidatedAddress).min(1).max(MAX_VALIDATE_BATCH, `at most ${MAX_VALIDATE_BATCH} addresses in one batch`),
  })
  .strict();

const Check = (description: string) => z.boolean().nullable().meta({ description });

export const ValidationView = z.object({
  address: z.string().meta({ description: 'The address as given.' }),
  result: z.enum(['deliverable', 'undeliverable', 'risky', 'unknown']).meta({
    description:
      'undeliverable: it cannot receive mail, or is suppressed; unknown: DNS did not answer; risky: disposable, role, a likely typo or a local part many systems refuse; deliverable: none of these (docs/validate.md).',
  }),
  reasons: z.array(z.string()).meta({ description: 'Why, as codes (docs/validate.md); empty when deliverable.' }),
  checks: z
    .object({
      syntax: z.boolean().meta({ description: 'Valid per RFC 5321/5322 (internationalised domains allowed).' }),
      domain: Check('The domain exists in DNS.'),
      mx: Check('The domain has a mail host: MX records, or without them an address of its own (A/AAAA).'),
      null_mx: Check('The domain publishes a null MX (RFC 7505): it accepts no mail.'),
      disposable: Check('The domain is a disposable-mail service.'),
      role: Check('The local part is a role account (admin, postmaster, noreply, support...).'),
      free_provider: Check('The domain is a free mailbox provider.'),
      suppressed: Check("The address is on the tenant's suppression list."),
    })
    .meta({ description: 'Each finding; null where it could not be made (after a syntax failure, or when DNS did not answer).' }),
  suggestion: z
    .string()
    .nullable()
    .meta({ description: 'The likely intended address when the domain looks like a typo of a common one.' }),
});

export const ValidateBatchResponse = z.object({
  results: z.array(ValidationView).meta({ description: 'One per address, in order.' }),
});

/** How a capture was signed: as delivery would sign it, or not at all. */
export const CapturedDkim = z
  .object({
    d: z.string().meta({ description: "The signing domain (the From address's domain)." }),
    s: z.array(z.string()).meta({ description: 'The selectors: RSA-2048, then Ed25519.' }),
  })
  .nullable()
  .meta({
    description:
      "DKIM: a message from a verified sending domain of the tenant is captured signed, both signatures, exactly as it would be sent; null: unsigned (any other From domain; the timeline's email.sent says why).",
  });

export const CapturedView = z.object({
  message_id: z.string(),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  html: z.string(),
  text: z.string(),
  headers: z.record(z.string(), z.string()),
  captured_at: z.string(),
  dkim: CapturedDkim,
});

export const Quota = z.object({
  per_second: z.number().int().positive().nullable().meta({ description: 'Sends per second; null: no limit.' }),
  per_day: z.number().int().positive().nullable().meta({ description: 'Sends per UTC day; null: no limit.' }),
});

export const TenantCreate = z
  .object({
    name: z.string().min(1).max(200),
    default_from: Address.nullable().optional(),
    quota: Quota.partial().optional(),
  })
  .strict();

const QueueWeight = z.number().positive().max(1000).meta({
  description:
    "The tenant's share of each destination's delivery slots in the fair queue beside the other tenants waiting for them (1 by default; 2 takes twice the slots of a tenant of weight 1). See docs/deliverability.md.",
});

export const TenantUpdate = TenantCreate.partial().extend({ queue_weight: QueueWeight.optional() }).strict();

export const TenantView = z.object({
  id: z.string(),
  name: z.string(),
  default_from: z.string().nullable(),
  quota: Quota,
  queue_weight: QueueWeight,
  created_at: z.string(),
});

/** Exactly an origin, `https://shop.example` or `http://localhost:8080`, as a browser sends it. */
const Origin = z
  .string()
  .max(300)
  .transform((value, ctx) => {
    const url = URL.canParse(value) ? new URL(value) : null;
    const bare = url && url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    if (!url || !bare || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      ctx.addIssue({ code: 'custom', message: 'an origin: http(s)://host[:port], no path' });
      return z.NEVER;
    }
    return url.origin; // lower-case host, default port dropped: the form a browser's Origin header has
  })
  .meta({ description: 'An origin, e.g. https://shop.example', examples: ['https://shop.example'] });

const PerMinute = z.number().int().min(1).max(1_000_000).nullable();

/** The settings of keys a page holds (public and sandbox): where it may send from, and how often. */
const BrowserKeySettings = {
  allowed_origins: z
    .array(Origin)
    .max(100)
    .optional()
    .meta({ description: 'Browser SDK: the origins a page may send from with this key; empty (the default): any origin.' }),
  rate_limit: z
    .object({
      per_key: PerMinute.optional().meta({
        description: `Browser SDK sends per minute for the whole key; null: ${DEFAULT_BROWSER_RATE.per_key}.`,
      }),
      per_ip: PerMinute.optional().meta({
        description: `Browser SDK sends per minute from one client IP; null: ${DEFAULT_BROWSER_RATE.per_ip}.`,
      }),
    })
    .strict()
    .optional(),
};

const KeyScopeEnum = z.enum(['full_access', 'sending_access']);

export const KeyCreate = z
  .object({
    kind: z.enum(['live', 'sandbox', 'public']),
    scope: KeyScopeEnum.optional().meta({
      description: 'A live key only: full_access (the default) manages resources; sending_access sends and reads messages.',
    }),
    sandbox: z.boolean().optional().meta({
      description:
        'A public key only: true makes a key for trying the browser SDK out, whose sends are captured and never delivered.',
    }),
    name: z.string().max(200).nullable().optional(),
    ...BrowserKeySettings,
  })
  .strict();

export const KeyUpdate = z
  .object({ name: z.string().max(200).nullable().optional(), ...BrowserKeySettings })
  .strict()
  .meta({ description: 'The fields to change; rate_limit fields not given stay as they are.' });

export const KeyView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kind: z.enum(['live', 'sandbox', 'public']),
  scope: KeyScopeEnum.meta({ description: 'full_access for a live key made so; sending_access for every other key.' }),
  sandbox: z.boolean().meta({ description: 'Its sends are captured, never delivered.' }),
  name: z.string().nullable(),
  prefix: z.string(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  allowed_origins: z.array(z.string()).meta({ description: 'Origins a page may send from (browser SDK); empty: any.' }),
  rate_limit: z.object({ per_key: z.number().int().nullable(), per_ip: z.number().int().nullable() }).meta({
    description: `Browser SDK sends per minute, per key and per client IP; null: the defaults (${DEFAULT_BROWSER_RATE.per_key} and ${DEFAULT_BROWSER_RATE.per_ip}).`,
  }),
});

export const KeyParams = z.object({ id: z.string(), keyId: z.string() });

/**
 * A webhook receiver's URL. Credentials in it (`https://user:pass@host/`) are refused: they would be
 * stored and listed in clear; a receiver checks the signature instead (docs/webhooks.md).
 */
export const WebhookUrl = z
  .string()
  .min(1)
  .max(2048)
  .refine((u) => !URL.canParse(u) || (!new URL(u).username && !new URL(u).password), 'must not carry a user name or password')
  .meta({ description: 'https URL of the receiver (a public address: see the SSRF guard), without user:password@.' });
