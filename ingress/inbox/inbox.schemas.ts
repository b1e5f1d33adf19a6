// The inbox's JSON shapes: what its routes validate and answer, and what the OpenAPI document shows.
import { z } from 'zod';
import { MIN_CAPTURE_SEARCH } from '../../store/catalog.port.ts';
import { CapturedDkim, EventEnvelope } from '../rest/schemas.ts';

export const Scope = z
  .enum(['key', 'tenant'])
  .default('key')
  .meta({ description: 'key: the messages the signed-in sandbox key sent; tenant: every capture of its tenant.' });

export const ListQuery = z.object({
  scope: Scope,
  q: z
    .string()
    .trim()
    .min(MIN_CAPTURE_SEARCH)
    .max(200)
    // A NUL is refused outright by PostgreSQL's text (a 500), and no capture holds a control character worth finding.
    .regex(/^[^\u0000-\u0008\u000b-\u001f\u007f]*$/, 'holds a control character')
    .optional()
    .meta({
      description: `Found anywhere in the recipient, the subject or the text part, any case; ${MIN_CAPTURE_SEARCH} characters or more.`,
    }),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
});

export const ScopeQuery = z.object({ scope: Scope });

export const CaptureSummary = z.object({
  id: z.string(),
  key_id: z
    .string()
    .nullable()
    .meta({ description: 'The sandbox key that sent it; null for captures from before keys were recorded.' }),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  captured_at: z.string(),
});

export const InboxMessage = CaptureSummary.extend({
  text: z.string().meta({ description: 'The text part: as sent, or generated from the html.' }),
  headers: z.array(z.object({ name: z.string(), value: z.string() })).meta({ description: 'In the order sent.' }),
  links: z.array(z.object({ url: z.string(), text: z.string() })).meta({ description: 'Every link of the html, in order.' }),
  remote_content: z
    .boolean()
    .meta({ description: 'The html loads images or other content from the network (blocked until asked for).' }),
  html_url: z.string().meta({ description: 'The html as a document of its own, under a strict Content-Security-Policy.' }),
  raw_url: z.string().meta({ description: 'The message as an .eml download: when signed, the exact bytes it would be sent as.' }),
  dkim: CapturedDkim,
  status: z.string().nullable().meta({ description: "The message's status; null once its retention has ended." }),
  events: z
    .array(EventEnvelope)
    .meta({ description: "The message's timeline, oldest first; empty once its retention has ended." }),
});

/** images=remote: the html with its remote images let through (the person asked for them). */
export const HtmlQuery = z.object({ images: z.enum(['remote']).optional() });

export const Deleted = z.object({ deleted: z.number().int() });

export const SignIn = z.object({ key: z.string().max(200) });
