// AutomationRunActor on the embedded runtime, with a real catalog and the real gate: a run starts
// once per event, and a send step whose turn fails after the gate admitted its message is run
// again by its reminder as a replay of that message, never a second one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import type { Automation, Contact } from '../../store/catalog.port.ts';
import { createGate, type AdmitResult, type Gate } from '../../gate/gate.ts';
import { automationSender } from '../../gate/automations.ts';
import { messageActor } from '../message/message.actor.ts';
import { recipientActor } from '../recipient/recipient.actor.ts';
import { tenantActor } from '../tenant/tenant.actor.ts';
import { automationRunActor, runClient, startRuns } from './automation.actor.ts';

let h: Harness;
let catalog: SqliteCatalog;
let dir: string;
afterEach(async () => {
  await h.cleanup();
  await catalog.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A tenant with a live key, a template, an audience with one contact, and an automation that sends once. */
async function world(): Promise<{ automation: Automation; contact: Contact }> {
  dir = mkdtempSync(join(tmpdir(), 'gatepost-automation-'));
  catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  await catalog.createTenant({ id: 'ten_a', name: 't', default_from: null, quota: { per_second: null, per_day: null } });
  await catalog.createKey({ id: 'key_a', tenant_id: 'ten_a', kind: 'live', name: null, prefix: 'gp_live_a' }, 'hash-a');
  await catalog.createTemplate('ten_a', 'tpl_a', {
    slug: 'hello',
    name: null,
    subject: 'Hello {{name}}',
    html: '<p>{{plan}}</p>',
    text: null,
    from: null,
    to: null,
    reply_to: null,
  });
  await catalog.createAudience({ id: 'aud_a', tenant_id: 'ten_a', name: 'a' });
  const contact = await catalog.createContact({
    id: 'con_a',
    tenant_id: 'ten_a',
    audience_id: 'aud_a',
    email: 'ann@example.com',
    name: 'Ann',
    data: { plan: 'pro' },
    unsubscribed: false,
  });
  const automation = await catalog.createAutomation({
    id: 'aut_a',
    tenant_id: 'ten_a',
    name: 'once',
    audience_id: 'aud_a',
    trigger: { type: 'contact_added' },
    steps: [{ id: 'hello', type: 'send', template: 'hello', from: 'Shop <hi@shop.example>' }],
    sandbox: true,
    key_id: 'key_a',
  });
  return { automation, contact };
}

describe('AutomationRunActor', () => {
  it('starts a run once per event, and sends a step run again as a replay of its first message', async () => {
    const { automation, contact } = await world();
    h = harness();
    const admitted: AdmitResult[] = [];
    let gate!: Gate;
    const observed: Pick<Gate, 'admit'> = {
      admit: async (a) => {
        const result = await gate.admit(a);
        admitted.push(result);
        return result;
      },
    };
    const send = automationSender(observed, catalog);
    let crashes = 1;
    const runtime = await h.start({
      actors: [
        messageActor,
        recipientActor,
        tenantActor,
        automationRunActor({
          catalog,
          // The first send's turn fails once the gate has admitted its message.
          send: async (args) => {
            const sent = await send(args);
            if (crashes-- > 0) throw new Error('the turn failed after the send');
            return sent;
          },
        }),
      ],
    });
    gate = createGate({ invoker: runtime, catalog, senders: null });

    const trigger = { type: 'contact_added' as const, event_id: contact.id };
    const [runId] = await startRuns(runtime, [automation], contact, trigger, {});
    expect(runId).toMatch(/^run_/);
    // The same event again starts nothing.
    expect(await startRuns(runtime, [automation], contact, trigger, {})).toEqual([]);

    const run = await eventually(async () => {
      const r = await runClient(runtime, runId!).get(undefined);
      if (r.status !== 'completed') throw new Error(r.status);
      return r;
    }, 15_000);
    expect(run.timeline.map((e) => e.type)).toEqual(['run.started', 'step.sent', 'run.completed']);
    expect(admitted.map((r) => [r.response.id, r.replayed])).toEqual([
      [run.timeline[1]!.data.message_id, false],
      [run.timeline[1]!.data.message_id, true],
    ]);
    expect(h.logs.some((l) => l.message.includes('reminder step of AutomationRunActor'))).toBe(true);
  });
});
