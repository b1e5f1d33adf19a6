// The bounce and complaint intake, driven in process with real actors and a real SQLite catalog:
// every fixture (fixtures in mail/fixtures/reports/) tied to its message and recorded, a DSN for
// another tenant's message never attributed, and junk kept, visible, as unrecognised.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { actor, type ActorRuntime } from '../../runtime/runtime.port.ts';
import { eventually, harness, type Harness } from '../../runtime/embedded/runtime.sqlite.testkit.ts';
import { messageActor } from '../../actors/message/message.actor.ts';
import { recipientActor } from '../../actors/recipient/recipient.actor.ts';
import { mirrorSuppressions } from '../../actors/recipient/mirror.ts';
import { tenantActor } from '../../actors/tenant/tenant.actor.ts';
import { admitArgs, attemptOutcome } from '../../actors/message/message.testkit.ts';
import { SqliteCatalog } from '../../store/sqlite/catalog.sqlite.ts';
import { tempDir } from '../../test/harness/gatepost.harness.ts';
import { bouncesIntake } from './bounces.intake.ts';
import type { ArrivedReport, ReportIntake } from './report.intake.ts';

const fixture = (name: string) => readFileSync(new URL(`../../mail/fixtures/reports/${name}`, import.meta.url));

let h: Harness;
let runtime: ActorRuntime;
let catalog: SqliteCatalog;
let intake: ReportIntake;

const dkim = { selector: 's', public_key: 'p', private_key: '-----BEGIN PRIVATE KEY-----\nk\n-----END PRIVATE KEY-----\n' };

/** A tenant with `domain` verified. */
async function tenantWith(id: string, domain: string): Promise<void> {
  await catalog.createTenant({ id, name: id, default_from: null, quota: { per_second: null, per_day: null } });
  const d = await catalog.createDomain({
    id: `dom_${id}`,
    tenant_id: id,
    name: domain,
    dkim: { rsa: dkim, ed25519: dkim },
    tracking_host: null,
  });
  await catalog.recordDomainCheck(id, d.id, { status: 'verified', checks: {} });
}

/** A live message `id` of tenant `tenantId` to `to`, accepted by the recipient's MX. */
async function sent(id: string, to: string, tenantId = 'ten_shop'): Promise<void> {
  const message = actor(runtime, messageActor, id);
  await message.admit(admitArgs({ tenant_id: tenantId, content: { ...admitArgs().content, from: 'orders@shop.example', to } }));
  const domain = to.slice(to.indexOf('@') + 1);
  await message.recordAttempt(attemptOutcome({ attempt: 1, result: 'sent', smtp_code: 250, domain, recipients: [to] }));
}

const arrived = (rcpt: string, raw: Buffer): ArrivedReport => ({
  rcpt,
  mailFrom: '',
  raw,
  remoteAddress: '192.0.2.25',
  receivedAt: new Date().toISOString(),
});

const timeline = async (id: string) => (await actor(runtime, messageActor, id).get(undefined)).record;
const reports = async (tenant_id?: string) => (await catalog.listReports({ tenant_id, limit: 100 })).data;

beforeEach(async () => {
  h = harness();
  catalog = new SqliteCatalog(join(tempDir('intake'), 'catalog.db'));
  runtime = await h.start({ actors: [messageActor, recipientActor, tenantActor] });
  mirrorSuppressions(runtime, catalog);
  intake = bouncesIntake({ invoker: runtime, catalog });
  await tenantWith('ten_shop', 'shop.example');
  await tenantWith('ten_other', 'other.example');
});
afterEach(async () => {
  await h.cleanup();
  await catalog.close();
});

describe('bouncesIntake: DSNs at a VERP return path', () => {
  it.each([
    ['postfix-dsn.eml', 'msg_7pst01', 'nobody@example.net', 'hard', 'bounced', '5.1.1'],
    ['exim-dsn.eml', 'msg_7exm01', 'gone@example.org', 'hard', 'bounced', '5.0.0'],
    ['gmail-dsn.eml', 'msg_7gml01', 'no.such.user@gmail.com', 'hard', 'bounced', '5.1.1'],
    ['gmail-delayed.eml', 'msg_7gdl01', 'slow@example.com', 'soft', 'sent', '4.4.1'],
    ['plain-undelivered.eml', 'msg_7pln01', 'old.user@legacy.example', 'hard', 'bounced', '5.2.2'],
  ])(
    '%s: email.bounced on %s, the status and suppression following, the report kept as recorded',
    async (file, id, to, type, status, code) => {
      await sent(id, to);
      await intake.take(arrived(`b+${id}@bounces.shop.example`, fixture(file)));
      const record = await timeline(id);
      expect(record.status).toBe(status);
      expect(
        record.events
          .filter((e) => e.type === 'email.bounced')
          .map((e) => [e.data.bounce_type, e.data.enhanced_code, e.data.recipients]),
      ).toEqual([[type, code, [to]]]);
      const [kept] = await reports('ten_shop');
      expect(kept).toMatchObject({ tenant_id: 'ten_shop', outcome: 'recorded', message_id: id, reason: null, excerpt: null });
      expect(record.events.find((e) => e.type === 'email.bounced')!.data.report_id).toBe(kept!.id);
      if (type === 'hard')
        await eventually(async () =>
          expect(await catalog.getSuppression('ten_shop', to)).toMatchObject({ reason: 'hard_bounce' }),
        );
      else expect(await catalog.getSuppression('ten_shop', to)).toBeNull();
    },
  );

  it('records the same DSN delivered twice once, and keeps both arrivals', async () => {
    await sent('msg_7pst01', 'nobody@example.net');
    await intake.take(arrived('b+msg_7pst01@bounces.shop.example', fixture('postfix-dsn.eml')));
    await intake.take(arrived('B+MSG_7PST01@BOUNCES.SHOP.EXAMPLE', fixture('postfix-dsn.eml')));
    expect((await timeline('msg_7pst01')).events.filter((e) => e.type === 'email.bounced')).toHaveLength(1);
    expect((await reports('ten_shop')).map((r) => r.outcome).sort()).toEqual(['recorded', 'repeat']);
  });
});

describe('bouncesIntake: ARF reports at the feedback-loop address', () => {
  it.each([
    ['yahoo-arf.eml', 'msg_7yho01', 'reader@yahoo.com'],
    ['outlook-jmrp.eml', 'msg_7otl01', 'complainer@outlook.com'],
  ])('%s: tied by the original message, email.complained on %s, the recipient suppressed', async (file, id, to) => {
    await sent(id, to);
    await intake.take(arrived('fbl@bounces.shop.example', fixture(file)));
    const record = await timeline(id);
    expect(record.status).toBe('sent');
    expect(
      record.events.filter((e) => e.type === 'email.complained').map((e) => [e.data.feedback_type, e.data.recipients]),
    ).toEqual([['abuse', [to]]]);
    expect(await reports('ten_shop')).toMatchObject([{ kind: 'arf', outcome: 'recorded', message_id: id }]);
    await eventually(async () => expect(await catalog.getSuppression('ten_shop', to)).toMatchObject({ reason: 'complaint' }));
  });

  it('ties a report whose original has only a Message-ID of Gatepost’s', async () => {
    await sent('msg_7yho01', 'reader@yahoo.com');
    const raw = fixture('yahoo-arf.eml').toString().replaceAll('b+msg_7yho01@bounces.shop.example', 'someone@elsewhere.example');
    await intake.take(arrived('fbl@bounces.shop.example', Buffer.from(raw)));
    expect(await reports('ten_shop')).toMatchObject([{ outcome: 'recorded', message_id: 'msg_7yho01' }]);
  });
});

describe('bouncesIntake: what is not attributed', () => {
  it("never attributes a DSN for another tenant's message: kept unrecognised for the tenant it arrived for, nothing recorded", async () => {
    await sent('msg_7pst01', 'nobody@example.net');
    const before = await timeline('msg_7pst01');
    // ten_other's return-path domain, naming ten_shop's message.
    await intake.take(arrived('b+msg_7pst01@bounces.other.example', fixture('postfix-dsn.eml')));
    expect(await timeline('msg_7pst01')).toEqual(before);
    expect(await reports('ten_other')).toMatchObject([
      {
        tenant_id: 'ten_other',
        kind: 'dsn',
        outcome: 'unrecognised',
        message_id: 'msg_7pst01',
        reason: 'no such message for this tenant',
      },
    ]);
    expect(await reports('ten_shop')).toEqual([]);
    // The complaint address of ten_other, with ten_shop's message inside: the same.
    await sent('msg_7yho01', 'reader@yahoo.com');
    await intake.take(arrived('fbl@bounces.other.example', fixture('yahoo-arf.eml')));
    expect((await timeline('msg_7yho01')).events.some((e) => e.type === 'email.complained')).toBe(false);
    expect(await catalog.getSuppression('ten_shop', 'nobody@example.net')).toBeNull();
    expect(await catalog.getSuppression('ten_shop', 'reader@yahoo.com')).toBeNull();
  });

  it('keeps binary junk, a report with no recognisable part and mail for an unowned domain as unrecognised, with why', async () => {
    await sent('msg_7odd01', 'someone@odd.example');
    let seed = 11;
    const junk = Buffer.from(Array.from({ length: 8192 }, () => (seed = (seed * 1103515245 + 12345) & 0xff)));
    await intake.take(arrived('b+msg_7odd01@bounces.shop.example', junk));
    await intake.take(arrived('b+msg_7odd01@bounces.shop.example', fixture('report-no-parts.eml')));
    await intake.take(arrived('postmaster@bounces.shop.example', fixture('postfix-dsn.eml')));
    await intake.take(arrived('b+msg_7pst01@bounces.nobody.example', fixture('postfix-dsn.eml')));
    const own = await reports('ten_shop');
    expect(own.map((r) => [r.kind, r.outcome, r.reason]).sort()).toEqual(
      [
        ['dsn', 'unrecognised', 'postmaster@bounces.shop.example is neither a VERP address nor the feedback-loop address'],
        ['unknown', 'unrecognised', 'a multipart/report (report-type=delivery-status) with no part this parser reads'],
        ['unknown', 'unrecognised', 'neither a delivery status notification nor an abuse report, and no status code in its text'],
      ].sort(),
    );
    const kept = own.find((r) => r.size === junk.length)!;
    expect(kept.excerpt).toHaveLength(2048);
    expect(kept.excerpt).not.toMatch(/\u0000/);
    expect((await reports()).find((r) => r.rcpt === 'b+msg_7pst01@bounces.nobody.example')).toMatchObject({
      tenant_id: null,
      outcome: 'unrecognised',
      reason: 'no tenant has nobody.example verified',
    });
    expect((await timeline('msg_7odd01')).events.map((e) => e.type)).toEqual([
      'message.accepted',
      'message.queued',
      'email.sent',
    ]);
  });
});
