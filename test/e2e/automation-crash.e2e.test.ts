// A process killed (SIGKILL, on both runtimes) after contacts were committed but before their
// contact_added runs were started: the catalog kept a trigger per contact with the contact, and
// after the restart the sweep starts every owed run, once per contact, and forgets the triggers.
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';

const CONTACTS = 1200;

let gp: GatepostProcess;
afterAll(async () => {
  await gp?.dispose();
});

describe('contact-added runs across a crash', () => {
  it('starts the run of every contact committed before the kill, once, after the restart', async () => {
    gp = await startGatepost();
    const t = await gp.tenant();
    const request = (method: string, path: string, body?: unknown) => gp.request(method, path, { key: t.live, body });
    const template = await request('POST', '/v1/templates', { slug: 'welcome', subject: 'Welcome', html: '<p>Hi</p>' });
    expect(template.status).toBe(201);
    const audience = (await request('POST', '/v1/audiences', { name: 'Signups' })).body.id as string;
    const made = await request('POST', '/v1/automations', {
      name: 'Welcome',
      sandbox: true,
      audience_id: audience,
      trigger: { type: 'contact_added' },
      steps: [
        { id: 'later', type: 'wait', duration: 'P1D' },
        { id: 'hello', type: 'send', template: 'welcome', from: 'Shop <hello@shop.example>' },
      ],
    });
    expect(made.status).toBe(201);
    const automation = made.body.id as string;

    // The import commits its first thousand contacts with their triggers, then starts their runs
    // sixteen at a time: killed as soon as triggers are owed, the rest of its runs are not started.
    const emails = Array.from({ length: CONTACTS }, (_, i) => `signup${i}-${t.id.slice(-6)}@example.com`);
    const importing = gp
      .request('POST', `/v1/audiences/${audience}/contacts/import`, {
        key: t.live,
        headers: { 'content-type': 'text/csv' },
        body: `email\n${emails.join('\n')}\n`,
      })
      .catch(() => null);
    const owed = async () =>
      ((await gp.catalogRows('contact_triggers')) as { audience_id: string }[]).filter((r) => r.audience_id === audience).length;
    await eventually(async () => (await owed()) > 0, 120_000, 5);
    await gp.kill();
    await importing;
    const contacts = ((await gp.catalogRows('contacts')) as { audience_id: string }[]).filter((r) => r.audience_id === audience);
    expect(contacts.length).toBeGreaterThan(0);
    expect(await owed()).toBeGreaterThan(0);

    await gp.start();
    const runs = async () =>
      ((await gp.catalogRows('automation_runs')) as { automation_id: string; contact_id: string }[]).filter(
        (r) => r.automation_id === automation,
      );
    await eventually(async () => (await owed()) === 0 && (await runs()).length === contacts.length, 180_000, 250);
    // One run per contact, each of a contact committed.
    const ran = (await runs()).map((r) => r.contact_id).sort();
    expect(ran).toEqual(contacts.map((c) => (c as unknown as { id: string }).id).sort());
    // Each run's steps start in a turn of its own, on a reminder (on Dapr, up to a second late):
    // the newest run comes to its wait once that turn has run.
    await eventually(
      async () => {
        const { body } = await request('GET', `/v1/automations/${automation}/runs?limit=1`);
        return body.data[0]?.status === 'waiting';
      },
      30_000,
      250,
    );
  });
});
