// Broadcasts end to end, on both runtimes: a broadcast to an audience fanned out through the gate
// to a real SMTP relay, one message per contact (the unsubscribed skipped, the suppressed refused),
// each with its contact's merge data, List-Unsubscribe and tracking; its results counted from the
// lifecycle events; a one-click unsubscribe marking the contact; a scheduled one firing on time;
// and each bad input a coded refusal that leaves the draft as it was.
import { describe, expect, it } from 'vitest';
import { eventually, type HttpAnswer } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();
const FROM = 'Shop <news@sender.example>';

type Answer = HttpAnswer;
const request = (method: string, path: string, body?: unknown, key = suite.tenant.live): Promise<Answer> =>
  suite.gp.request(method, path, { key, body });

/** An audience of the suite's tenant with these contacts. */
async function audienceOf(contacts: { email: string; name?: string; data?: object; unsubscribed?: boolean }[], key?: string) {
  const made = await request('POST', '/v1/audiences', { name: 'Readers' }, key);
  expect(made.status).toBe(201);
  for (const c of contacts) expect((await request('POST', `/v1/audiences/${made.body.id}/contacts`, c, key)).status).toBe(201);
  return made.body.id as string;
}

async function draft(fields: Record<string, unknown>): Promise<string> {
  const made = await request('POST', '/v1/broadcasts', { name: 'Spring', from: FROM, ...fields });
  expect(made.status).toBe(201);
  return made.body.id as string;
}

const broadcast = async (id: string) => (await request('GET', `/v1/broadcasts/${id}`)).body;
const broadcastWhen = (id: string, done: (b: any) => boolean, ms = 30_000) =>
  eventually<any>(async () => {
    const b = await broadcast(id);
    return done(b) ? b : undefined;
  }, ms);

const receivedBy = (address: string) => suite.relay.received.filter((r) => r.to.includes(address));

describe('broadcasts', () => {
  it('sends each contact one message through the gate, and counts what came of them', async () => {
    const run = Date.now().toString(36);
    const readers = Array.from({ length: 12 }, (_, i) => ({
      email: `reader${i}-${run}@example.com`,
      name: `Reader ${i}`,
      data: { city: i % 2 ? 'Oslo' : 'Rome' },
    }));
    const away = { email: `away-${run}@example.com`, name: 'Away', unsubscribed: true };
    const blocked = { email: `blocked-${run}@example.com`, name: 'Blocked' };
    expect((await request('POST', '/v1/suppressions', { address: blocked.email })).status).toBe(201);
    const audience = await audienceOf([...readers, away, blocked]);
    const id = await draft({
      audience_id: audience,
      subject: 'Sale in {{city}}, {{name}}',
      html: '<p>Hi {{name}} ({{email}}): {{sale}}. <a href="https://shop.example/sale">Shop</a></p>',
      data: { sale: 'half off', city: 'nowhere' },
    });
    expect(await broadcast(id)).toMatchObject({ id, status: 'draft', progress: null, results: null });

    const sent = await request('POST', `/v1/broadcasts/${id}/send`);
    expect(sent.status).toBe(200);
    expect(['sending', 'sent']).toContain(sent.body.status);
    const done = await broadcastWhen(id, (b) => b.status === 'sent' && b.results.sent === readers.length);
    expect(done.progress).toMatchObject({
      admitted: readers.length,
      refused: { suppressed: 1, unsubscribed: 1, other: 0 },
      started_at: expect.any(String),
      finished_at: expect.any(String),
    });
    expect(done.results).toEqual({ sent: readers.length, bounced: 0, opened: 0, clicked: 0, unsubscribed: 0, complained: 0 });
    const listed = (await request('GET', '/v1/broadcasts')).body.data.find((b: { id: string }) => b.id === id);
    expect(listed).toMatchObject({ status: 'sent', name: 'Spring' });

    // One message each, rendered with the contact's own data over the broadcast's.
    for (const [i, r] of readers.entries()) {
      const got = receivedBy(r.email);
      expect(got).toHaveLength(1);
      expect(got[0]!.parsed.subject).toBe(`Sale in ${i % 2 ? 'Oslo' : 'Rome'}, Reader ${i}`);
      expect(got[0]!.parsed.html).toContain(`Hi Reader ${i} (${r.email}): half off.`);
      expect(got[0]!.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
    }
    expect(receivedBy(away.email)).toEqual([]);
    expect(receivedBy(blocked.email)).toEqual([]);

    // The message is the broadcast stream's, tagged with the broadcast, through the broadcast ingress.
    const first = receivedBy(readers[0]!.email)[0]!;
    const messageId = /<(msg_[0-9a-z]+)@/.exec(first.messageId)![1]!;
    const message = (await request('GET', `/v1/messages/${messageId}`)).body;
    expect(message).toMatchObject({ stream: 'broadcast', tags: [`broadcast:${id}`] });
    expect(message.events[0]).toMatchObject({ type: 'message.accepted', data: { ingress: 'broadcast' } });

    // An open and a one-click unsubscribe: counted for the broadcast, and the contact marked.
    const html = String(first.parsed.html);
    const pixel = /<img[^>]+src="([^"]+\/t\/o\/[^"]+)"/.exec(html)![1]!;
    expect((await fetch(pixel)).status).toBe(200);
    const unfolded = first.raw.replace(/\r\n[ \t]+/g, ' ');
    const unsubscribe = /^List-Unsubscribe: <([^>]+\/u\/[^>]+)>/m.exec(unfolded)![1]!;
    const oneClick = await fetch(unsubscribe, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.status).toBe(200);
    const counted = await broadcastWhen(id, (b) => b.results.unsubscribed === 1 && b.results.opened === 1);
    expect(counted.results).toMatchObject({ sent: readers.length, opened: 1, unsubscribed: 1 });
    const contact = await eventually<any>(async () => {
      const c = (await request('GET', `/v1/audiences/${audience}/contacts/${readers[0]!.email}`)).body;
      return c.unsubscribed === true && c;
    });
    expect(contact).toMatchObject({ email: readers[0]!.email, unsubscribed: true });

    // Sent once: a second send is refused, and so are deleting and cancelling it.
    const again = await request('POST', `/v1/broadcasts/${id}/send`);
    expect([again.status, again.body.error.code]).toEqual([409, 'broadcast_already_sent']);
    const deleted = await request('DELETE', `/v1/broadcasts/${id}`);
    expect([deleted.status, deleted.body.error.code]).toEqual([409, 'broadcast_not_draft']);
    const cancelled = await request('POST', `/v1/broadcasts/${id}/cancel`);
    expect([cancelled.status, cancelled.body.error.code]).toEqual([409, 'broadcast_not_cancellable']);
  });

  it('sends a scheduled broadcast at its time, from a template; a cancelled one stays cancelled', async () => {
    const run = Date.now().toString(36);
    const slug = `news-${run}`;
    const template = await request('POST', '/v1/templates', { slug, subject: 'News for {{name}}', html: '<p>{{name}}</p>' });
    expect(template.status).toBe(201);
    const reader = { email: `timed-${run}@example.com`, name: 'Tim' };
    const audience = await audienceOf([reader]);
    const id = await draft({ audience_id: audience, template: slug });
    const sendAt = new Date(Date.now() + 2_000).toISOString();
    const scheduled = await request('POST', `/v1/broadcasts/${id}/send`, { send_at: sendAt });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body).toMatchObject({ status: 'scheduled', send_at: sendAt, progress: { admitted: 0 } });
    const done = await broadcastWhen(id, (b) => b.status === 'sent' && b.results.sent === 1);
    expect(Date.parse(done.progress.started_at)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(receivedBy(reader.email).map((r) => r.parsed.subject)).toEqual(['News for Tim']);

    const later = await draft({ audience_id: audience, template: slug });
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    expect((await request('POST', `/v1/broadcasts/${later}/send`, { send_at: inAnHour })).status).toBe(200);
    const cancelled = await request('POST', `/v1/broadcasts/${later}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', progress: { admitted: 0, finished_at: expect.any(String) } });
    expect((await broadcast(later)).status).toBe('cancelled');
    const resend = await request('POST', `/v1/broadcasts/${later}/send`);
    expect([resend.status, resend.body.error.code]).toEqual([409, 'broadcast_already_sent']);
  });

  it("shows a fan-out's progress from the catalog, where its actor writes it after each page", async () => {
    // 600 contacts and a daily quota of 550: the first page (500) is admitted and saved, the second
    // admits 50 and is refused the rest, so the broadcast pauses until the quota's reset.
    const t = await suite.gp.tenant({ quota: { per_day: 550 } });
    const asTenant = (method: string, path: string, body?: unknown) => suite.gp.request(method, path, { key: t.live, body });
    const audience = (await asTenant('POST', '/v1/audiences', { name: 'Many' })).body.id as string;
    const emails = Array.from({ length: 600 }, (_, i) => `many${i}-${t.id.slice(-6)}@example.com`);
    const imported = await suite.gp.request('POST', `/v1/audiences/${audience}/contacts/import`, {
      key: t.live,
      headers: { 'content-type': 'text/csv' },
      body: `email\n${emails.join('\n')}\n`,
    });
    expect(imported.body).toMatchObject({ added: 600, refused_count: 0 });
    const made = await asTenant('POST', '/v1/broadcasts', {
      name: 'Many',
      audience_id: audience,
      from: FROM,
      subject: 'Hi',
      html: '<p>{{email}}</p>',
      sandbox: true,
    });
    const id = made.body.id as string;
    expect((await asTenant('POST', `/v1/broadcasts/${id}/send`)).status).toBe(200);

    const paused = await eventually<any>(async () => {
      const b = (await asTenant('GET', `/v1/broadcasts/${id}`)).body;
      return b.status === 'paused' ? b : undefined;
    }, 60_000);
    expect(paused.paused).toEqual({ reason: "the tenant's daily send quota is used up", until: expect.any(String) });
    expect(paused.progress).toEqual({
      admitted: 500,
      refused: { suppressed: 0, unsubscribed: 0, other: 0 },
      started_at: expect.any(String),
      finished_at: null,
    });
    // What the read showed is the catalog's row, as the actor wrote it.
    const row = (await suite.gp.catalogRows('broadcasts')).find((r: any) => r.id === id) as Record<string, unknown>;
    const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
    expect([row.status, json(row.paused), json(row.progress)]).toEqual(['paused', paused.paused, paused.progress]);

    const cancelled = await asTenant('POST', `/v1/broadcasts/${id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', paused: null, progress: { admitted: 500 } });
    expect(await asTenant('GET', `/v1/broadcasts/${id}`).then((r) => r.body)).toMatchObject({
      status: 'cancelled',
      paused: null,
      progress: { admitted: 500, finished_at: expect.any(String) },
    });
  });

  it('refuses bad input with a coded error, leaving the draft as it was', async () => {
    const other = await suite.gp.tenant();
    const theirs = await audienceOf([{ email: 'theirs@example.com' }], other.live);
    const empty = await audienceOf([]);
    const code = (a: Answer) => [a.status, a.body.error?.code];

    // Another tenant's audience is none; an unknown template; html and a template at once.
    expect(
      code(await request('POST', '/v1/broadcasts', { name: 'x', from: FROM, audience_id: theirs, subject: 's', html: 'h' })),
    ).toEqual([404, 'not_found']);
    expect(
      code(await request('POST', '/v1/broadcasts', { name: 'x', from: FROM, audience_id: empty, template: 'no-such-slug' })),
    ).toEqual([422, 'template_not_found']);
    const both = await request('POST', '/v1/broadcasts', { name: 'x', from: FROM, audience_id: empty, html: 'h', template: 't' });
    expect(code(both)).toEqual([400, 'invalid_request']);
    expect(both.body.error.details).toEqual([{ field: 'html', message: 'give html or a template, one of the two' }]);
    expect(
      code(await request('POST', '/v1/broadcasts', { name: 'x', from: 'nobody', audience_id: empty, subject: 's', html: 'h' })),
    ).toEqual([400, 'invalid_request']);

    // An empty audience, and send_at in the past or beyond 30 days: refused, still a draft.
    const id = await draft({ audience_id: empty, subject: 'Hello', html: '<p>Hello</p>' });
    expect(code(await request('POST', `/v1/broadcasts/${id}/send`))).toEqual([422, 'audience_empty']);
    const full = await audienceOf([{ email: `one-${Date.now()}@example.com` }]);
    const timed = await draft({ audience_id: full, subject: 'Hello', html: '<p>Hello</p>' });
    const past = await request('POST', `/v1/broadcasts/${timed}/send`, { send_at: new Date(Date.now() - 60_000).toISOString() });
    expect(code(past)).toEqual([422, 'send_at_out_of_range']);
    expect(past.body.error.details).toEqual([{ field: 'send_at', message: 'is in the past' }]);
    const far = await request('POST', `/v1/broadcasts/${timed}/send`, {
      send_at: new Date(Date.now() + 31 * 24 * 3_600_000).toISOString(),
    });
    expect(code(far)).toEqual([422, 'send_at_out_of_range']);
    for (const b of [id, timed]) expect(await broadcast(b)).toMatchObject({ status: 'draft', progress: null });

    // A draft is not cancelled but deleted; another tenant's broadcast is none.
    expect(code(await request('POST', `/v1/broadcasts/${timed}/cancel`))).toEqual([409, 'broadcast_not_cancellable']);
    expect(code(await request('GET', `/v1/broadcasts/${timed}`, undefined, other.live))).toEqual([404, 'not_found']);
    expect(code(await request('POST', `/v1/broadcasts/${timed}/send`, undefined, other.live))).toEqual([404, 'not_found']);
    expect((await request('DELETE', `/v1/broadcasts/${timed}`)).status).toBe(204);
    expect(code(await request('GET', `/v1/broadcasts/${timed}`))).toEqual([404, 'not_found']);
    expect(code(await request('POST', `/v1/broadcasts/${timed}/send`))).toEqual([404, 'not_found']);
    // A sandbox key manages no broadcasts.
    expect(code(await request('GET', '/v1/broadcasts', undefined, suite.tenant.sandbox))).toEqual([403, 'insufficient_scope']);
  });
});
