// Broadcasts as the API drafts, reads, sends and cancels them: the catalog keeps each draft (and
// lists them), its BroadcastActor owns the fan-out once it is sent, and the catalog's counts of
// its messages' events are its results (docs/broadcasts.md). Sending checks everything a send
// can be refused for before the actor is told: a refused send leaves a draft as it was.
import { GatepostError } from '../errors/errors.catalog.ts';
import { newId } from '../lib/ids.ts';
import { checkSendAt } from '../mail/policy.ts';
import type { Invoker } from '../runtime/runtime.port.ts';
import type { Broadcast, BroadcastCreate, BroadcastEventKind, BroadcastState, Catalog, Page } from '../store/catalog.port.ts';
import { broadcastClient } from '../actors/broadcast/broadcast.actor.ts';
import type { BroadcastContent, BroadcastPlan } from '../actors/broadcast/broadcast.state.ts';
import { checkSender, type Sender, type VerifiedSenders } from './gate.ts';

/** A broadcast with its fan-out's progress (the catalog's, as its actor last wrote it) and its messages' results (null for a draft). */
export type BroadcastView = Omit<Broadcast, 'tenant_id'> & { results: Record<BroadcastEventKind, number> | null };

/** A draft's fields, as a request gives them. */
export type BroadcastDraft = Omit<BroadcastCreate, 'id' | 'tenant_id'>;

export interface Broadcasts {
  create(tenantId: string, draft: BroadcastDraft): Promise<BroadcastView>;
  list(tenantId: string, page: { limit: number; cursor?: string }): Promise<Page<Broadcast>>;
  get(tenantId: string, id: string): Promise<BroadcastView>;
  /** Deletes a draft; a broadcast sent already is refused (`broadcast_not_draft`). */
  remove(tenantId: string, id: string): Promise<void>;
  /** Sends a draft now, or schedules it for `sendAt`. */
  send(sender: Sender, id: string, sendAt: string | null): Promise<BroadcastView>;
  /** Stops a scheduled, sending or paused broadcast: nobody not yet admitted is sent to. */
  cancel(tenantId: string, id: string): Promise<BroadcastView>;
}

const noBroadcast = (id: string) => new GatepostError('not_found', `No broadcast has the id "${id}".`);

/** A draft as the API shows it: no results yet. */
function draftView({ tenant_id: _, ...b }: Broadcast): BroadcastView {
  return { ...b, results: null };
}

export function broadcasts(deps: { invoker: Invoker; catalog: Catalog; senders: VerifiedSenders | null }): Broadcasts {
  const { catalog } = deps;
  const broadcastOf = async (tenantId: string, id: string) => {
    const b = await catalog.getBroadcast(tenantId, id);
    if (!b) throw noBroadcast(id);
    return b;
  };
  const audienceOf = async (tenantId: string, audienceId: string) => {
    const audience = await catalog.getAudience(tenantId, audienceId);
    if (!audience) {
      throw new GatepostError('not_found', `No audience has the id "${audienceId}".`, {
        details: [{ field: 'audience_id', message: 'no such audience' }],
      });
    }
    return audience;
  };
  const templateOf = async (tenantId: string, slug: string) => {
    const template = await catalog.getTemplate(tenantId, slug);
    if (!template) {
      throw new GatepostError('template_not_found', `No template has the slug "${slug}".`, {
        details: [{ field: 'template', message: 'no template with this slug' }],
      });
    }
    return template;
  };

  /** The view of a broadcast sent, with its state as its actor answered it (the catalog's may be older), and its counted events. */
  const viewOf = async (b: Broadcast, state: BroadcastState): Promise<BroadcastView> => ({
    ...draftView(b),
    ...state,
    results: await catalog.broadcastCounts(b.id),
  });

  /** What the broadcast will send, its template read now. */
  async function contentOf(b: Broadcast): Promise<BroadcastContent> {
    if (b.template === null) return { from: b.from, subject: b.subject!, html: b.html!, text: b.text };
    const t = await templateOf(b.tenant_id, b.template);
    return { from: b.from, subject: b.subject ?? t.subject, html: b.html ?? t.html, text: b.text ?? t.text };
  }

  return {
    async create(tenantId, draft) {
      await audienceOf(tenantId, draft.audience_id);
      if (draft.template !== null) await templateOf(tenantId, draft.template);
      return draftView(await catalog.createBroadcast({ ...draft, id: newId('bro'), tenant_id: tenantId }));
    },

    list: (tenantId, page) => catalog.listBroadcasts(tenantId, page),

    // The catalog's, as the actor wrote it after its last page: never waits for a page under way.
    async get(tenantId, id) {
      const b = await broadcastOf(tenantId, id);
      return b.progress ? { ...draftView(b), results: await catalog.broadcastCounts(id) } : draftView(b);
    },

    async remove(tenantId, id) {
      await broadcastOf(tenantId, id);
      await broadcastClient(deps.invoker, id).discard(undefined);
      await catalog.deleteBroadcast(tenantId, id);
    },

    async send(sender, id, sendAt) {
      const tenantId = sender.tenant.id;
      const b = await broadcastOf(tenantId, id);
      if (b.status !== 'draft') {
        throw new GatepostError('broadcast_already_sent', `The broadcast is ${b.status}: only a draft can be sent.`);
      }
      const problems = checkSendAt(sendAt ?? undefined);
      if (problems.length > 0) throw new GatepostError('send_at_out_of_range', undefined, { details: problems });
      const audience = await audienceOf(tenantId, b.audience_id);
      if (audience.contacts === 0) {
        throw new GatepostError(
          'audience_empty',
          `The audience "${audience.name}" has no contacts: there is nobody to send to.`,
          {
            details: [{ field: 'audience_id', message: 'the audience has no contacts' }],
          },
        );
      }
      const content = await contentOf(b);
      const sandbox = b.sandbox || sender.key.sandbox;
      if (!sandbox && deps.senders) await checkSender(deps.senders, tenantId, content.from);
      const plan: BroadcastPlan = {
        tenant_id: tenantId,
        key: sender.key,
        audience_id: b.audience_id,
        content,
        data: b.data,
        sandbox,
      };
      const state = await broadcastClient(deps.invoker, id).send({ plan, send_at: sendAt });
      return viewOf(b, state);
    },

    async cancel(tenantId, id) {
      const b = await broadcastOf(tenantId, id);
      return viewOf(b, await broadcastClient(deps.invoker, id).cancel(undefined));
    },
  };
}
