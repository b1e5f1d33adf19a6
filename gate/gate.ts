// The admission gate: the one way from any ingress to a committed message. An ingress
// authenticates, turns its wire format into a SendDraft and calls `admit`; the gate checks the
// draft, renders it, and hands it to the message's actor, whose `admit` turn checks
// idempotency, suppression and quota and commits the message with its outbox entry.
import { actor, type Invoker } from '../dapr/runtime.port.ts';
import { GatepostError, invalid, type ErrorDetail } from '../errors/errors.catalog.ts';
import { canonicalJson } from '../lib/canonical.ts';
import { derivedId, newId, sha256Hex } from '../lib/ids.ts';
import { renderField } from '../mail/render.ts';
import type { RenderedContent } from '../mail/content.ts';
import { messageActor } from '../actors/message/message.actor.ts';
import type { AdmitResult, Stream } from '../actors/message/message.state.ts';
import type { ApiKey, Catalog, Tenant } from '../store/catalog.port.ts';
import { checkAttachments, checkHeaders, checkSendAt } from './policy.ts';

export type Ingress = 'api' | 'api_batch';

/** Who is sending: resolved by the ingress from the credential it was given. */
export interface Sender {
  tenant: Tenant;
  key: ApiKey;
}

/** A send as every ingress describes it, before rendering. */
export interface SendDraft {
  from?: string;
  to?: string;
  reply_to?: string;
  subject?: string;
  html?: string;
  text?: string;
  /** A template slug; its subject, html, text (and stored from, to, reply_to) are used. */
  template?: string;
  data?: Record<string, unknown>;
  headers?: Record<string, string>;
  tags?: string[];
  stream?: Stream;
  send_at?: string;
  /** How many attachments the request carried: any at all is refused, never dropped. */
  attachments?: number;
}

export interface Admission {
  sender: Sender;
  ingress: Ingress;
  draft: SendDraft;
  idempotencyKey?: string;
}

export interface Gate {
  admit(admission: Admission): Promise<AdmitResult>;
}

export function createGate(deps: { invoker: Invoker; catalog: Catalog }): Gate {
  return {
    async admit({ sender, ingress, draft, idempotencyKey }) {
      const { tenant, key } = sender;
      if (key.kind === 'public') {
        throw new GatepostError('key_not_allowed', 'A public key can only send through the browser SDK endpoints.');
      }
      checkAttachments(draft.attachments ?? 0);
      const problems: ErrorDetail[] = [...checkSendAt(draft.send_at), ...checkHeaders(draft.headers ?? {})];
      if (problems.length > 0) throw invalid(problems);

      // The rendered content is checked (checkContent) inside the message actor's admitting turn.
      const content = await render(deps.catalog, tenant, draft);

      const requestHash = sha256Hex(canonicalJson({ ...draft, stream: draft.stream ?? 'transactional' }));
      const id = idempotencyKey ? derivedId('msg', tenant.id, idempotencyKey) : newId('msg');
      return actor(deps.invoker, messageActor, id).admit({
        tenant_id: tenant.id,
        sandbox: key.kind === 'sandbox',
        stream: draft.stream ?? 'transactional',
        ingress,
        request_hash: requestHash,
        idempotency_key: idempotencyKey ?? null,
        tags: draft.tags ?? [],
        content,
        send_at: draft.send_at ? new Date(draft.send_at).toISOString() : null,
        quota: tenant.quota,
      });
    },
  };
}

async function render(catalog: Catalog, tenant: Tenant, draft: SendDraft): Promise<RenderedContent> {
  const data = draft.data ?? {};
  let source = {
    subject: draft.subject,
    html: draft.html,
    text: draft.text,
    from: draft.from,
    to: draft.to,
    reply_to: draft.reply_to,
  };
  if (draft.template !== undefined) {
    const template = await catalog.getTemplate(tenant.id, draft.template);
    if (!template) {
      throw new GatepostError('template_not_found', `No template has the slug "${draft.template}".`, {
        details: [{ field: 'template', message: 'no template with this slug' }],
      });
    }
    source = {
      subject: draft.subject ?? template.subject,
      html: draft.html ?? template.html,
      text: draft.text ?? template.text ?? undefined,
      from: draft.from ?? template.from ?? undefined,
      to: draft.to ?? template.to ?? undefined,
      reply_to: draft.reply_to ?? template.reply_to ?? undefined,
    };
  }
  const missing = (['to', 'subject', 'html'] as const).filter((f) => !source[f]);
  if (missing.length > 0) throw invalid(missing.map((field) => ({ field, message: 'is required' })));
  const from = source.from ?? tenant.default_from;
  if (!from) throw new GatepostError('sender_required');
  return {
    from,
    to: source.to!,
    reply_to: source.reply_to ?? null,
    subject: renderField('subject', source.subject!, data, 'text'),
    html: renderField('html', source.html!, data, 'html'),
    text: source.text === undefined ? null : renderField('text', source.text, data, 'text'),
    headers: draft.headers ?? {},
  };
}
