// The EmailJS wire format, as its official browser client (@emailjs/browser v4) sends it, into a
// SendDraft. `send` posts JSON {lib_version, user_id, service_id, template_id, template_params};
// `sendForm` posts the form's own inputs as multipart fields beside lib_version, service_id,
// template_id and user_id. The draft names a template and its data and nothing else: from a
// browser the addresses come from the stored template only (spec part 1 rule 13).
import { z } from 'zod';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import type { SendDraft } from '../../../gate/gate.ts';

/** The JSON body of /api/v1.0/email/send; user_id first, so a request missing it is told so first. */
export const SendJson = z
  .object({
    user_id: z.string().min(1).meta({ description: 'The public key: gp_public_… (or gp_sandbox_… to test).' }),
    service_id: z
      .string()
      .min(1)
      .meta({ description: 'The stream: default_service or transactional, or broadcast.', examples: ['default_service'] }),
    template_id: z.string().min(1).meta({ description: 'The slug of a template that stores its recipient (`to`).' }),
    template_params: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .meta({ description: "The template's {{placeholders}}. Data only: no parameter chooses or adds an address." }),
    lib_version: z.string().optional(),
  })
  .strict()
  .meta({ description: 'What @emailjs/browser `send` posts. Any other field is refused (400).' });

/** The fields of /api/v1.0/email/send-form that are not the form's own inputs. */
export const FormControls = SendJson.omit({ template_params: true }).meta({
  description: "What @emailjs/browser `sendForm` posts: these fields, and the form's inputs as template params.",
});

const CONTROL_FIELDS = new Set(Object.keys(FormControls.shape));

/** A browser send, parsed and not yet authenticated. */
export interface BrowserSend {
  /** The key the page holds. */
  userId: string;
  draft: SendDraft;
}

/** EmailJS's reserved service id names the default service; Gatepost's streams are named as such. */
const STREAMS = new Map<string, NonNullable<SendDraft['stream']>>([
  ['default_service', 'transactional'],
  ['transactional', 'transactional'],
  ['broadcast', 'broadcast'],
]);

/** EmailJS answers one plain sentence per refusal: the first problem, in its words. */
function refusal(error: z.ZodError, body: object): GatepostError {
  const issue = error.issues[0]!;
  if (issue.path.length === 0 && issue.code !== 'unrecognized_keys') {
    return new GatepostError('invalid_request', 'The request body must be a JSON object');
  }
  if (issue.code === 'unrecognized_keys') {
    const name = issue.keys[0]!;
    const text =
      name === 'accessToken'
        ? 'The accessToken parameter is not supported: Gatepost authenticates a browser by the public key in user_id'
        : `The ${name} parameter is not supported: the template decides the message and its recipient`;
    return new GatepostError('invalid_request', text, { details: [{ field: name, message: 'unknown field' }] });
  }
  const field = String(issue.path[0]);
  const given = (body as Record<string, unknown>)[field];
  const details = [{ field, message: issue.message }];
  if (given !== undefined && given !== null && given !== '') {
    return new GatepostError('invalid_request', `The ${field} parameter is invalid`, { details });
  }
  // No key at all is EmailJS's most common refusal; it keeps its own code.
  return new GatepostError(field === 'user_id' ? 'missing_api_key' : 'invalid_request', `The ${field} parameter is required`, {
    details,
  });
}

function toSend(body: z.output<typeof SendJson>, attachments: number): BrowserSend {
  const stream = STREAMS.get(body.service_id);
  if (!stream) {
    throw new GatepostError(
      'invalid_request',
      'The service ID is invalid: use default_service (or transactional, or broadcast)',
      { details: [{ field: 'service_id', message: 'default_service, transactional or broadcast' }] },
    );
  }
  return {
    userId: body.user_id,
    draft: { template: body.template_id, data: body.template_params ?? {}, stream, attachments },
  };
}

/** The JSON of `send`. It carries no files, so it never has attachments. */
export function fromJson(body: unknown): BrowserSend {
  const given = body ?? {};
  const parsed = SendJson.safeParse(given);
  if (!parsed.success) throw refusal(parsed.error, given);
  return toSend(parsed.data, 0);
}

/**
 * The fields of `sendForm`, in order, and how many files the form carried. Every field that is
 * not a control field is a template param (a name given twice gives a list), so a form input named
 * `to` or `cc` is data for the template, like any other.
 */
export function fromForm(fields: [name: string, value: string][], files: number): BrowserSend {
  const controls = new Map<string, string>();
  // A Map, not an object: an input may be named anything, `__proto__` included.
  const params = new Map<string, string | string[]>();
  for (const [name, value] of fields) {
    if (CONTROL_FIELDS.has(name)) {
      if (controls.has(name)) {
        throw new GatepostError('invalid_request', `The ${name} parameter is given twice`, {
          details: [{ field: name, message: 'given twice' }],
        });
      }
      controls.set(name, value);
    } else {
      const before = params.get(name);
      params.set(name, before === undefined ? value : [before, value].flat());
    }
  }
  const given = Object.fromEntries(controls);
  const parsed = FormControls.safeParse(given);
  if (!parsed.success) throw refusal(parsed.error, given);
  return toSend({ ...parsed.data, template_params: Object.fromEntries(params) }, files);
}
