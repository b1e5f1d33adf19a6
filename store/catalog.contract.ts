// The behaviour every Catalog implementation owes its callers, as one vitest suite. Each store's
// test file calls catalogContract with a factory; the suite makes one catalog, and every test
// works in tenants of its own, so tests never see each other's rows.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it as vitestIt } from 'vitest';
import { GatepostError, type ErrorCode } from '../errors/errors.catalog.ts';
import type {
  AutomationCreate,
  AutomationRun,
  AutomationTrigger,
  CapturedMessage,
  Catalog,
  DomainCreate,
  Page,
  ReceiptKey,
  ReceivedReport,
  Suppression,
  Template,
  TemplateFields,
  Tenant,
  WebhookCreate,
} from './catalog.port.ts';
import { encodeCursor } from './cursor.ts';

/** The format of `new Date().toISOString()`. */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Cursors no list ever returned: not base64url JSON, the wrong shape, the wrong number of parts. */
const BAD_CURSORS = [
  'not a cursor!',
  Buffer.from('{"after":"x"}').toString('base64url'),
  Buffer.from('[1]').toString('base64url'),
  encodeCursor([]),
  encodeCursor(['a', 'b', 'c']),
];

async function expectError(promise: Promise<unknown>, code: ErrorCode): Promise<GatepostError> {
  const error = await promise.then(
    () => expect.fail(`expected a GatepostError "${code}", got a result`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatepostError);
  expect(error).toMatchObject({ code });
  return error as GatepostError;
}

/** Every page of a list, following next_cursor to the end. */
async function allPages<T>(list: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await list(cursor);
    pages.push(page.data);
    if (page.next_cursor === null) return pages;
    expect(page.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    cursor = page.next_cursor;
    if (pages.length > 100) throw new Error('the cursor never ends');
  }
}

const byCreation = (a: { created_at: string; id: string }, b: { created_at: string; id: string }) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

const fields = (slug: string, more: Partial<TemplateFields> = {}): TemplateFields => ({
  slug,
  name: `Template ${slug}`,
  subject: `Hello {{name}} (${slug})`,
  html: `<p>Hello {{name}}</p>`,
  text: 'Hello {{name}}',
  from: 'Shop <shop@example.com>',
  to: null,
  reply_to: 'help@example.com',
  ...more,
});

export function catalogContract(name: string, make: () => Promise<{ catalog: Catalog; cleanup: () => Promise<void> }>): void {
  describe(`Catalog contract: ${name}`, () => {
    let catalog: Catalog;
    let cleanup: (() => Promise<void>) | undefined;
    let failure: unknown;

    beforeAll(async () => {
      try {
        ({ catalog, cleanup } = await make());
      } catch (error) {
        failure = error;
      }
    });
    afterAll(async () => {
      await cleanup?.();
    });

    /** A test that fails, rather than is skipped, when there is no catalog (its server is down, say). */
    const it = (title: string, test: () => Promise<void>) =>
      vitestIt(title, async () => {
        if (failure) throw failure;
        await test();
      });

    const unique = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const newTenant = (extra: Partial<Pick<Tenant, 'id' | 'name' | 'default_from' | 'quota'>> = {}) =>
      catalog.createTenant({
        id: unique('ten'),
        name: 'Acme',
        default_from: null,
        quota: { per_second: null, per_day: null },
        ...extra,
      });

    describe('tenants', () => {
      it('creates a tenant and reads it back as created', async () => {
        const id = unique('ten');
        const before = new Date().toISOString();
        const created = await catalog.createTenant({
          id,
          name: 'Acme Ltd',
          default_from: 'Acme <hello@acme.test>',
          quota: { per_second: 10, per_day: 50_000 },
        });
        expect(created).toEqual({
          id,
          name: 'Acme Ltd',
          default_from: 'Acme <hello@acme.test>',
          quota: { per_second: 10, per_day: 50_000 },
          queue_weight: 1,
          created_at: expect.stringMatching(ISO),
        });
        expect(created.created_at >= before).toBe(true);
        expect(created.created_at <= new Date().toISOString()).toBe(true);
        expect(await catalog.getTenant(id)).toEqual(created);
        expect(await catalog.getTenant(unique('ten'))).toBeNull();
      });

      it('lists tenants by creation time, then id', async () => {
        // Ids in the reverse of creation order: whichever order wins, it has to be the documented one.
        const stem = unique('ten');
        const created: Tenant[] = [];
        for (const suffix of ['z', 'm', 'a']) created.push(await newTenant({ id: `${stem}_${suffix}`, name: suffix }));
        const listed = await catalog.listTenants();
        const mine = listed.filter((t) => t.id.startsWith(stem));
        expect(mine).toEqual([...created].sort(byCreation));
        expect(listed).toEqual([...listed].sort(byCreation));
      });

      it('updates name, default sender and quota, leaving the rest', async () => {
        const t = await newTenant({ name: 'Before', default_from: null, quota: { per_second: 1, per_day: 100 } });

        const quota = await catalog.updateTenant(t.id, { quota: { per_second: 5, per_day: null } });
        expect(quota).toEqual({ ...t, quota: { per_second: 5, per_day: null } });

        const from = await catalog.updateTenant(t.id, { default_from: 'news@acme.test', name: 'After' });
        expect(from).toEqual({ ...t, name: 'After', default_from: 'news@acme.test', quota: { per_second: 5, per_day: null } });
        expect(await catalog.getTenant(t.id)).toEqual(from);

        const cleared = await catalog.updateTenant(t.id, { default_from: null });
        expect(cleared?.default_from).toBeNull();
        expect(await catalog.getTenant(t.id)).toEqual({ ...from, default_from: null });

        const weighed = await catalog.updateTenant(t.id, { queue_weight: 2.5 });
        expect(weighed).toEqual({ ...from, default_from: null, queue_weight: 2.5 });
        expect(await catalog.getTenant(t.id)).toEqual(weighed);

        expect(await catalog.updateTenant(unique('ten'), { name: 'Nobody' })).toBeNull();
      });

      it('keeps both of two concurrent updates of different fields', async () => {
        const t = await newTenant({ name: 'Before', default_from: null });
        await Promise.all([
          catalog.updateTenant(t.id, { name: 'After' }),
          catalog.updateTenant(t.id, { default_from: 'news@acme.test' }),
          catalog.updateTenant(t.id, { quota: { per_second: 2, per_day: 20 } }),
        ]);
        expect(await catalog.getTenant(t.id)).toEqual({
          ...t,
          name: 'After',
          default_from: 'news@acme.test',
          quota: { per_second: 2, per_day: 20 },
        });
      });
    });

    describe('API keys', () => {
      it('creates a key, finds it by hash and lists it', async () => {
        const t = await newTenant();
        const hash = unique('hash');
        const key = await catalog.createKey(
          {
            id: unique('key'),
            tenant_id: t.id,
            kind: 'live',
            scope: 'full_access',
            sandbox: false,
            name: 'CI',
            prefix: 'gp_live_ab',
          },
          hash,
        );
        expect(key).toEqual({
          id: key.id,
          tenant_id: t.id,
          kind: 'live',
          scope: 'full_access',
          sandbox: false,
          name: 'CI',
          prefix: 'gp_live_ab',
          created_at: expect.stringMatching(ISO),
          revoked_at: null,
          allowed_origins: [],
          rate_limit: { per_key: null, per_ip: null },
        });
        expect(await catalog.findKeyByHash(hash)).toEqual(key);
        expect(await catalog.findKeyByHash(unique('hash'))).toBeNull();
        expect(await catalog.listKeys(t.id)).toEqual([key]);
      });

      it("lists a tenant's keys by creation time, and only that tenant's", async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const stem = unique('key');
        const keys = [];
        for (const [suffix, kind, scope, sandbox] of [
          ['z', 'live', 'sending_access', false],
          ['m', 'sandbox', 'sending_access', true],
          ['a', 'public', 'sending_access', true],
        ] as const) {
          keys.push(
            await catalog.createKey(
              { id: `${stem}_${suffix}`, tenant_id: a.id, kind, scope, sandbox, name: null, prefix: suffix },
              unique('h'),
            ),
          );
        }
        const other = await catalog.createKey(
          { id: unique('key'), tenant_id: b.id, kind: 'live', scope: 'full_access', sandbox: false, name: null, prefix: 'b' },
          unique('h'),
        );
        expect(await catalog.listKeys(a.id)).toEqual([...keys].sort(byCreation));
        expect((await catalog.listKeys(a.id)).map((k) => [k.kind, k.scope, k.sandbox])).toEqual(
          expect.arrayContaining([
            ['live', 'sending_access', false],
            ['sandbox', 'sending_access', true],
            ['public', 'sending_access', true],
          ]),
        );
        expect(await catalog.listKeys(b.id)).toEqual([other]);
        expect(await catalog.listKeys(unique('ten'))).toEqual([]);
      });

      it('revokes a key: it is no longer found by hash, stays listed, and revoking again changes nothing', async () => {
        const [t, stranger] = [await newTenant(), await newTenant()];
        const hash = unique('hash');
        const key = await catalog.createKey(
          {
            id: unique('key'),
            tenant_id: t.id,
            kind: 'sandbox',
            scope: 'sending_access',
            sandbox: true,
            name: 'dev',
            prefix: 'gp_test_x',
          },
          hash,
        );

        // Another tenant cannot revoke it, nor can a key id that does not exist.
        expect(await catalog.revokeKey(stranger.id, key.id)).toBeNull();
        expect(await catalog.revokeKey(t.id, unique('key'))).toBeNull();
        expect(await catalog.findKeyByHash(hash)).toEqual(key);

        const revoked = await catalog.revokeKey(t.id, key.id);
        expect(revoked).toEqual({ ...key, revoked_at: expect.stringMatching(ISO) });
        expect(revoked!.revoked_at! >= key.created_at).toBe(true);
        expect(await catalog.findKeyByHash(hash)).toBeNull();
        expect(await catalog.listKeys(t.id)).toEqual([revoked]);

        expect(await catalog.revokeKey(t.id, key.id)).toEqual(revoked);
      });
      it('keeps the browser settings a key is created with', async () => {
        const t = await newTenant();
        const hash = unique('hash');
        const origins = ['https://shop.example', 'http://localhost:8080'];
        const key = await catalog.createKey(
          {
            id: unique('key'),
            tenant_id: t.id,
            kind: 'public',
            scope: 'sending_access',
            sandbox: false,
            name: 'site',
            prefix: 'gp_public_ab',
            allowed_origins: origins,
            rate_limit: { per_key: 500, per_ip: null },
          },
          hash,
        );
        expect(key).toMatchObject({ allowed_origins: origins, rate_limit: { per_key: 500, per_ip: null } });
        expect(await catalog.findKeyByHash(hash)).toEqual(key);
        expect(await catalog.listKeys(t.id)).toEqual([key]);
      });

      it('updates the fields given of one key of one tenant, leaving the rest', async () => {
        const [t, stranger] = [await newTenant(), await newTenant()];
        const hash = unique('hash');
        const key = await catalog.createKey(
          {
            id: unique('key'),
            tenant_id: t.id,
            kind: 'public',
            scope: 'sending_access',
            sandbox: false,
            name: 'site',
            prefix: 'gp_public_cd',
          },
          hash,
        );
        const origins = await catalog.updateKey(t.id, key.id, { allowed_origins: ['https://a.example'] });
        expect(origins).toEqual({ ...key, allowed_origins: ['https://a.example'] });

        const rates = await catalog.updateKey(t.id, key.id, { rate_limit: { per_key: 30, per_ip: 3 }, name: null });
        expect(rates).toEqual({ ...origins, name: null, rate_limit: { per_key: 30, per_ip: 3 } });
        expect(await catalog.findKeyByHash(hash)).toEqual(rates);
        expect(await catalog.updateKey(t.id, key.id, {})).toEqual(rates);

        const cleared = await catalog.updateKey(t.id, key.id, {
          allowed_origins: [],
          rate_limit: { per_key: null, per_ip: null },
        });
        expect(cleared).toEqual({ ...rates, allowed_origins: [], rate_limit: { per_key: null, per_ip: null } });

        expect(await catalog.updateKey(stranger.id, key.id, { name: 'theirs' })).toBeNull();
        expect(await catalog.updateKey(t.id, unique('key'), { name: 'none' })).toBeNull();
        expect(await catalog.listKeys(t.id)).toEqual([cleared]);
      });

      it('keeps both of two concurrent key updates of different fields', async () => {
        const t = await newTenant();
        const key = await catalog.createKey(
          {
            id: unique('key'),
            tenant_id: t.id,
            kind: 'sandbox',
            scope: 'sending_access',
            sandbox: true,
            name: 'dev',
            prefix: 'gp_sandbox_ef',
          },
          unique('hash'),
        );
        await Promise.all([
          catalog.updateKey(t.id, key.id, { allowed_origins: ['https://b.example'] }),
          catalog.updateKey(t.id, key.id, { rate_limit: { per_key: 7, per_ip: 2 } }),
          catalog.updateKey(t.id, key.id, { name: 'renamed' }),
        ]);
        expect(await catalog.listKeys(t.id)).toEqual([
          { ...key, name: 'renamed', allowed_origins: ['https://b.example'], rate_limit: { per_key: 7, per_ip: 2 } },
        ]);
      });
    });

    describe('templates', () => {
      it('creates a template and gets it by slug', async () => {
        const t = await newTenant();
        const id = unique('tpl');
        const created = await catalog.createTemplate(t.id, id, fields('welcome', { to: 'ops@acme.test', text: null }));
        expect(created).toEqual({
          id,
          tenant_id: t.id,
          slug: 'welcome',
          name: 'Template welcome',
          subject: 'Hello {{name}} (welcome)',
          html: '<p>Hello {{name}}</p>',
          text: null,
          from: 'Shop <shop@example.com>',
          to: 'ops@acme.test',
          reply_to: 'help@example.com',
          created_at: expect.stringMatching(ISO),
          updated_at: created.created_at,
        });
        expect(await catalog.getTemplate(t.id, 'welcome')).toEqual(created);
        expect(await catalog.getTemplate(t.id, 'nope')).toBeNull();
      });

      it('lists templates by slug, byte order (not the locale of the store)', async () => {
        const t = await newTenant();
        const slugs = ['receipt', 'ab', 'a-z', 'a_b', 'Zeta', 'alpha', 'a.b', 'é-accent'];
        const created = new Map<string, Template>();
        for (const slug of slugs) created.set(slug, await catalog.createTemplate(t.id, unique('tpl'), fields(slug)));
        const listed = await catalog.listTemplates(t.id);
        expect(listed.map((x) => x.slug)).toEqual(['Zeta', 'a-z', 'a.b', 'a_b', 'ab', 'alpha', 'receipt', 'é-accent']);
        expect(listed).toEqual(listed.map((x) => created.get(x.slug)));
      });

      it('updates only the fields given', async () => {
        const t = await newTenant();
        const created = await catalog.createTemplate(t.id, unique('tpl'), fields('invoice'));
        await new Promise((r) => setTimeout(r, 5));

        const updated = await catalog.updateTemplate(t.id, 'invoice', { subject: 'Your invoice {{number}}', text: null });
        expect(updated).toEqual({
          ...created,
          subject: 'Your invoice {{number}}',
          text: null,
          updated_at: expect.stringMatching(ISO),
        });
        expect(updated!.updated_at > created.updated_at).toBe(true);
        expect(await catalog.getTemplate(t.id, 'invoice')).toEqual(updated);

        const more = await catalog.updateTemplate(t.id, 'invoice', {
          from: null,
          to: 'billing@acme.test',
          name: null,
          html: '<b>x</b>',
        });
        expect(more).toEqual({
          ...updated,
          from: null,
          to: 'billing@acme.test',
          name: null,
          html: '<b>x</b>',
          updated_at: more!.updated_at,
        });
        expect(await catalog.getTemplate(t.id, 'invoice')).toEqual(more);

        expect(await catalog.updateTemplate(t.id, 'missing', { subject: 'x' })).toBeNull();
      });

      it('renames a slug: the old one is gone, the template (and its id) answer to the new one', async () => {
        const t = await newTenant();
        const created = await catalog.createTemplate(t.id, unique('tpl'), fields('welcome'));
        const renamed = await catalog.updateTemplate(t.id, 'welcome', { slug: 'hello' });
        expect(renamed).toEqual({ ...created, slug: 'hello', updated_at: expect.stringMatching(ISO) });
        expect(await catalog.getTemplate(t.id, 'welcome')).toBeNull();
        expect(await catalog.getTemplate(t.id, 'hello')).toEqual(renamed);
        expect((await catalog.listTemplates(t.id)).map((x) => x.slug)).toEqual(['hello']);
      });

      it('keeps both of two concurrent updates, a rename among them', async () => {
        const t = await newTenant();
        const created = await catalog.createTemplate(t.id, unique('tpl'), fields('welcome'));
        const results = await Promise.all([
          catalog.updateTemplate(t.id, 'welcome', { subject: 'New subject' }),
          catalog.updateTemplate(t.id, 'welcome', { html: '<p>New</p>' }),
        ]);
        expect(results.map((r) => r?.id)).toEqual([created.id, created.id]);
        expect(await catalog.getTemplate(t.id, 'welcome')).toEqual({
          ...created,
          subject: 'New subject',
          html: '<p>New</p>',
          updated_at: expect.stringMatching(ISO),
        });

        // An update that started before a rename does not undo it.
        await Promise.all([
          catalog.updateTemplate(t.id, 'welcome', { slug: 'hello' }),
          catalog.updateTemplate(t.id, 'welcome', { text: 'plain' }),
        ]);
        expect((await catalog.listTemplates(t.id)).map((x) => x.slug)).toEqual(['hello']);
      });

      it('refuses a taken slug on create and on rename with template_exists, changing nothing', async () => {
        const t = await newTenant();
        const first = await catalog.createTemplate(t.id, unique('tpl'), fields('welcome'));
        const second = await catalog.createTemplate(t.id, unique('tpl'), fields('receipt'));

        const onCreate = await expectError(
          catalog.createTemplate(t.id, unique('tpl'), fields('welcome', { subject: 'Other' })),
          'template_exists',
        );
        expect(onCreate.message).toContain('welcome');
        expect(onCreate.status).toBe(409);

        const onRename = await expectError(
          catalog.updateTemplate(t.id, 'receipt', { slug: 'welcome', subject: 'Changed' }),
          'template_exists',
        );
        expect(onRename.message).toContain('welcome');

        expect(await catalog.listTemplates(t.id)).toEqual([second, first]);
        // Renaming a template to its own slug is no conflict.
        expect((await catalog.updateTemplate(t.id, 'welcome', { slug: 'welcome' }))?.id).toBe(first.id);
      });

      it('deletes: true, then false; the same slug of another tenant stays', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        await catalog.createTemplate(a.id, unique('tpl'), fields('welcome'));
        const theirs = await catalog.createTemplate(b.id, unique('tpl'), fields('welcome'));
        expect(await catalog.deleteTemplate(a.id, 'welcome')).toBe(true);
        expect(await catalog.deleteTemplate(a.id, 'welcome')).toBe(false);
        expect(await catalog.getTemplate(a.id, 'welcome')).toBeNull();
        expect(await catalog.listTemplates(a.id)).toEqual([]);
        expect(await catalog.getTemplate(b.id, 'welcome')).toEqual(theirs);
        // The slug is free again.
        expect((await catalog.createTemplate(a.id, unique('tpl'), fields('welcome'))).slug).toBe('welcome');
      });

      it('keeps tenants apart: same slug in two tenants, each sees and changes only its own', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const mine = await catalog.createTemplate(a.id, unique('tpl'), fields('welcome', { subject: 'A' }));
        const theirs = await catalog.createTemplate(b.id, unique('tpl'), fields('welcome', { subject: 'B' }));
        await catalog.createTemplate(b.id, unique('tpl'), fields('only-b'));

        expect(await catalog.listTemplates(a.id)).toEqual([mine]);
        expect((await catalog.listTemplates(b.id)).map((x) => x.slug)).toEqual(['only-b', 'welcome']);
        expect(await catalog.getTemplate(a.id, 'only-b')).toBeNull();
        expect(await catalog.updateTemplate(a.id, 'only-b', { subject: 'x' })).toBeNull();
        expect(await catalog.deleteTemplate(a.id, 'only-b')).toBe(false);

        await catalog.updateTemplate(a.id, 'welcome', { subject: 'A2' });
        expect(await catalog.getTemplate(b.id, 'welcome')).toEqual(theirs);
        // Renaming in one tenant to a slug only the other has is no conflict.
        expect((await catalog.updateTemplate(a.id, 'welcome', { slug: 'only-b' }))?.subject).toBe('A2');
      });
    });

    describe('reports', () => {
      const report = (tenant_id: string | null, received_at: string, more: Partial<ReceivedReport> = {}): ReceivedReport => ({
        id: unique('rpt'),
        tenant_id,
        rcpt: 'b+msg_1@bounces.shop.example',
        mail_from: '',
        remote_address: '192.0.2.9',
        received_at,
        kind: 'dsn',
        outcome: 'recorded',
        message_id: 'msg_1',
        reason: null,
        findings: { recipients: [{ recipient: 'gone@example.net', status: '5.1.1' }], original: null },
        excerpt: null,
        size: 2048,
        ...more,
      });

      it('keeps a report as given, once, and lists a tenant its own only', async () => {
        const [t, other] = [await newTenant(), await newTenant()];
        const r = report(t.id, '2026-11-24T09:12:41.000Z');
        await catalog.putReport(r);
        await catalog.putReport({ ...r, outcome: 'repeat' }); // the same id again changes nothing
        const junk = report(other.id, '2026-11-24T09:12:42.000Z', {
          kind: 'unknown',
          outcome: 'unrecognised',
          message_id: null,
          reason: 'no status code',
          findings: {},
          excerpt: 'Subject: \ufffd junk',
        });
        await catalog.putReport(junk);
        expect(await catalog.listReports({ tenant_id: t.id, limit: 10 })).toEqual({ data: [r], next_cursor: null });
        expect(await catalog.listReports({ tenant_id: other.id, limit: 10 })).toEqual({ data: [junk], next_cursor: null });
      });

      it('lists every tenant’s, the unowned too, newest first, and next_cursor walks through them once', async () => {
        const [t, other] = [await newTenant(), await newTenant()];
        const put = [
          report(t.id, '2999-01-01T00:00:01.000Z'),
          report(null, '2999-01-01T00:00:03.000Z', { outcome: 'unrecognised', reason: 'no tenant owns bounces.nobody.example' }),
          report(other.id, '2999-01-01T00:00:02.000Z'),
          report(t.id, '2999-01-01T00:00:03.000Z'),
        ];
        for (const r of put) await catalog.putReport(r);
        const newest = [...put].sort((a, b) =>
          a.received_at === b.received_at ? (a.id < b.id ? 1 : -1) : a.received_at < b.received_at ? 1 : -1,
        );
        // Other tests' reports (and, on a kept database, earlier runs') are in the list too.
        const ours = new Set(put.map((r) => r.id));
        const pages = await allPages((cursor) => catalog.listReports({ limit: 3, cursor }));
        expect(pages.flat().filter((r) => ours.has(r.id))).toEqual(newest);
        expect(new Set(pages.flat().map((r) => r.id)).size).toBe(pages.flat().length);
        const own = await allPages((cursor) => catalog.listReports({ tenant_id: t.id, limit: 1, cursor }));
        expect(own.flat()).toEqual(newest.filter((r) => r.tenant_id === t.id));
      });

      it('refuses a cursor it did not hand out with invalid_request', async () => {
        for (const cursor of BAD_CURSORS) await expectError(catalog.listReports({ limit: 1, cursor }), 'invalid_request');
      });
    });

    describe('suppressions', () => {
      const suppression = (tenant_id: string, address: string, more: Partial<Suppression> = {}): Suppression => ({
        tenant_id,
        address,
        reason: 'hard_bounce',
        detail: '550 5.1.1 user unknown',
        created_at: new Date().toISOString(),
        ...more,
      });

      it('puts and lists a suppression as given', async () => {
        const t = await newTenant();
        const s = suppression(t.id, 'gone@example.com', { created_at: '2024-03-01T12:00:00.000Z' });
        await catalog.putSuppression(s);
        expect(await catalog.listSuppressions(t.id, { limit: 10 })).toEqual({ data: [s], next_cursor: null });
      });

      it('gets one suppression by address, for its own tenant only', async () => {
        const [t, other] = [await newTenant(), await newTenant()];
        const s = suppression(t.id, 'one@example.com', { created_at: '2024-03-01T12:00:00.000Z' });
        await catalog.putSuppression(s);
        expect(await catalog.getSuppression(t.id, 'one@example.com')).toEqual(s);
        expect(await catalog.getSuppression(other.id, 'one@example.com')).toBeNull();
        await catalog.deleteSuppression(t.id, 'one@example.com');
        expect(await catalog.getSuppression(t.id, 'one@example.com')).toBeNull();
      });

      it('upserts: putting the same address again replaces reason, detail and time', async () => {
        const t = await newTenant();
        await catalog.putSuppression(suppression(t.id, 'x@example.com', { created_at: '2024-03-01T12:00:00.000Z' }));
        const again = suppression(t.id, 'x@example.com', {
          reason: 'complaint',
          detail: null,
          created_at: '2024-03-02T08:30:00.123Z',
        });
        await catalog.putSuppression(again);
        expect((await catalog.listSuppressions(t.id, { limit: 10 })).data).toEqual([again]);
      });

      it('lists by address in byte order, pages of `limit`, and next_cursor walks through all of them once', async () => {
        const t = await newTenant();
        const addresses = [
          'b@x.test',
          'Bob@x.test',
          'al.ice@x.test',
          'al_ice@x.test',
          'alice@x.test',
          'a-b@x.test',
          'zoe@x.test',
        ];
        const put = new Map<string, Suppression>();
        for (const [i, address] of addresses.entries()) {
          const s = suppression(t.id, address, { reason: i % 2 ? 'unsubscribe' : 'manual', detail: `#${i}` });
          put.set(address, s);
          await catalog.putSuppression(s);
        }
        const order = ['Bob@x.test', 'a-b@x.test', 'al.ice@x.test', 'al_ice@x.test', 'alice@x.test', 'b@x.test', 'zoe@x.test'];

        const pages = await allPages((cursor) => catalog.listSuppressions(t.id, { limit: 2, cursor }));
        expect(pages.map((p) => p.map((s) => s.address))).toEqual([
          order.slice(0, 2),
          order.slice(2, 4),
          order.slice(4, 6),
          order.slice(6),
        ]);
        expect(pages.flat()).toEqual(order.map((a) => put.get(a)));

        // A last page that is exactly full says so: no cursor to an empty page.
        const exact = await allPages((cursor) => catalog.listSuppressions(t.id, { limit: 7, cursor }));
        expect(exact.map((p) => p.length)).toEqual([7]);
        const big = await catalog.listSuppressions(t.id, { limit: 100 });
        expect(big).toEqual({ data: order.map((a) => put.get(a)), next_cursor: null });
      });

      it('refuses a cursor it did not hand out with invalid_request on field cursor', async () => {
        const t = await newTenant();
        await catalog.putSuppression(suppression(t.id, 'a@x.test'));
        for (const cursor of BAD_CURSORS) {
          const error = await expectError(catalog.listSuppressions(t.id, { limit: 1, cursor }), 'invalid_request');
          expect(error.details).toEqual([{ field: 'cursor', message: expect.any(String) }]);
        }
        // Nor one from the capture inbox (a different shape of cursor).
        const captureCursor = encodeCursor(['2024-01-01T00:00:00.000Z', 'msg_1']);
        await expectError(catalog.listSuppressions(t.id, { limit: 1, cursor: captureCursor }), 'invalid_request');
      });

      it('deletes one address of one tenant; deleting an absent one is fine', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const keepA = suppression(a.id, 'keep@x.test');
        const keepB = suppression(b.id, 'gone@x.test');
        await catalog.putSuppression(suppression(a.id, 'gone@x.test'));
        await catalog.putSuppression(keepA);
        await catalog.putSuppression(keepB);

        await catalog.deleteSuppression(a.id, 'gone@x.test');
        await catalog.deleteSuppression(a.id, 'never@x.test');
        expect((await catalog.listSuppressions(a.id, { limit: 10 })).data).toEqual([keepA]);
        expect((await catalog.listSuppressions(b.id, { limit: 10 })).data).toEqual([keepB]);
        expect(await catalog.listSuppressions(unique('ten'), { limit: 10 })).toEqual({ data: [], next_cursor: null });
      });
    });

    describe('sandbox captures', () => {
      const capture = (
        tenant_id: string,
        message_id: string,
        captured_at: string,
        more: Partial<CapturedMessage> = {},
      ): CapturedMessage => ({
        message_id,
        tenant_id,
        key_id: null,
        from: 'Shop <shop@example.com>',
        to: 'ann@example.com',
        subject: `Order ${message_id}`,
        html: '<p>Thanks, Ann — “ünïcode” ✓</p>',
        text: 'Thanks, Ann',
        // Header order is what the inbox shows: it has to come back as it went in.
        headers: {
          'X-Campaign': 'spring',
          Date: 'Fri, 01 Mar 2024 12:00:00 +0000',
          'Message-ID': `<${message_id}@gatepost>`,
          A: '1',
        },
        captured_at,
        dkim: null,
        source: null,
        ...more,
      });

      it('captures once per message id: a second put of the same id keeps the first', async () => {
        const t = await newTenant();
        const first = capture(t.id, 'msg_1', '2024-03-01T12:00:00.000Z');
        await catalog.putCapture(first);
        await catalog.putCapture({ ...first, subject: 'A retry', captured_at: '2024-03-01T12:05:00.000Z' });
        const got = await catalog.getCapture(t.id, 'msg_1');
        expect(got).toEqual(first);
        expect(Object.keys(got!.headers)).toEqual(['X-Campaign', 'Date', 'Message-ID', 'A']);
        expect(await catalog.listCaptures(t.id, { limit: 10 })).toEqual({ data: [first], next_cursor: null });

        // Concurrent puts (a batch in one tick), duplicates among them, all land exactly once.
        const many = Array.from({ length: 6 }, (_, i) => capture(t.id, `msg_c${i}`, `2024-03-02T00:00:0${i}.000Z`));
        await Promise.all([...many, ...many].map((c) => catalog.putCapture(c)));
        expect((await catalog.listCaptures(t.id, { limit: 100 })).data).toEqual([...many].reverse().concat(first));
      });

      it('lists newest first (ties by message id, descending) and pages by cursor', async () => {
        const t = await newTenant();
        const at = (s: number) => new Date(Date.UTC(2024, 2, 1, 12, 0, s)).toISOString();
        const captures = [
          capture(t.id, 'msg_a', at(1)),
          capture(t.id, 'msg_b', at(3)),
          capture(t.id, 'msg_c', at(2)),
          capture(t.id, 'msg_d', at(3)),
          capture(t.id, 'msg_e', at(0)),
        ];
        for (const c of captures) await catalog.putCapture(c);
        const order = ['msg_d', 'msg_b', 'msg_c', 'msg_a', 'msg_e'];

        const pages = await allPages((cursor) => catalog.listCaptures(t.id, { limit: 2, cursor }));
        expect(pages.map((p) => p.map((c) => c.message_id))).toEqual([order.slice(0, 2), order.slice(2, 4), order.slice(4)]);
        expect(pages.flat()).toEqual(order.map((id) => captures.find((c) => c.message_id === id)));

        const exact = await allPages((cursor) => catalog.listCaptures(t.id, { limit: 5, cursor }));
        expect(exact.map((p) => p.length)).toEqual([5]);

        // A page resumes after the last row given, even when a newer capture arrives in between.
        const first = await catalog.listCaptures(t.id, { limit: 2 });
        await catalog.putCapture(capture(t.id, 'msg_new', at(9)));
        const next = await catalog.listCaptures(t.id, { limit: 2, cursor: first.next_cursor! });
        expect(next.data.map((c) => c.message_id)).toEqual(['msg_c', 'msg_a']);
      });

      it('gets one capture by message id, only in its own tenant', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const mine = capture(a.id, 'msg_1', '2024-03-01T12:00:00.000Z');
        const theirs = capture(b.id, 'msg_1', '2024-03-01T13:00:00.000Z', { subject: 'Theirs' });
        const onlyTheirs = capture(b.id, 'msg_2', '2024-03-01T14:00:00.000Z');
        await catalog.putCapture(mine);
        await catalog.putCapture(theirs);
        await catalog.putCapture(onlyTheirs);

        expect(await catalog.getCapture(a.id, 'msg_1')).toEqual(mine);
        expect(await catalog.getCapture(b.id, 'msg_1')).toEqual(theirs);
        expect(await catalog.getCapture(a.id, 'msg_2')).toBeNull();
        expect(await catalog.getCapture(a.id, 'msg_none')).toBeNull();
        expect((await catalog.listCaptures(a.id, { limit: 10 })).data).toEqual([mine]);
        expect((await catalog.listCaptures(b.id, { limit: 10 })).data).toEqual([onlyTheirs, theirs]);
        expect(await catalog.listCaptures(unique('ten'), { limit: 10 })).toEqual({ data: [], next_cursor: null });
      });

      it("lists one key's captures, or the tenant's, and pages either by cursor", async () => {
        const t = await newTenant();
        const at = (s: number) => new Date(Date.UTC(2024, 2, 1, 12, 0, s)).toISOString();
        const mine = [1, 2, 3].map((s) => capture(t.id, `msg_k${s}`, at(s), { key_id: 'key_mine' }));
        const theirs = capture(t.id, 'msg_o', at(4), { key_id: 'key_theirs' });
        const before = capture(t.id, 'msg_n', at(5));
        for (const c of [...mine, theirs, before]) await catalog.putCapture(c);
        const pages = await allPages((cursor) => catalog.listCaptures(t.id, { limit: 2, cursor, key_id: 'key_mine' }));
        expect(pages).toEqual([[mine[2], mine[1]], [mine[0]]]);
        expect((await catalog.listCaptures(t.id, { limit: 10 })).data).toEqual([before, theirs, ...[...mine].reverse()]);
        expect((await catalog.getCapture(t.id, 'msg_n'))!.key_id).toBeNull();
      });

      it('searches the recipient, subject and text (the html’s when none was given), any case, anywhere in them', async () => {
        const t = await newTenant();
        const other = await newTenant();
        const at = (s: number) => new Date(Date.UTC(2024, 2, 1, 12, 0, s)).toISOString();
        const ann = capture(t.id, 'msg_s1', at(1), { to: 'Ann.Smith@shop.example', subject: 'Welcome', text: 'hello' });
        const invoice = capture(t.id, 'msg_s2', at(2), { subject: 'Your INVOICE #42', text: 'hello' });
        const html = capture(t.id, 'msg_s3', at(3), {
          html: '<style>.quux {}</style><p>Parcel <b>ZX-81</b> ships 100% free_ &amp; fast</p>',
          text: null,
        });
        const given = capture(t.id, 'msg_s4', at(4), {
          html: '<p>unseen words</p>',
          text: 'Reset code: quokka',
          key_id: 'key_a',
        });
        for (const c of [ann, invoice, html, given, capture(other.id, 'msg_s5', at(5), { subject: 'invoice' })]) {
          await catalog.putCapture(c);
        }
        const found = async (search: string, more: { key_id?: string; limit?: number } = {}) =>
          (await catalog.listCaptures(t.id, { limit: more.limit ?? 10, search, key_id: more.key_id })).data.map(
            (c) => c.message_id,
          );
        expect(await found('ann.smith')).toEqual(['msg_s1']);
        expect(await found('invoice')).toEqual(['msg_s2']);
        expect(await found('zx-81')).toEqual(['msg_s3']);
        expect(await found('100% free_')).toEqual(['msg_s3']);
        // The words a reader sees: entities decoded, a stylesheet's not.
        expect(await found('free_ & fast')).toEqual(['msg_s3']);
        expect(await found('zx-81 ships')).toEqual(['msg_s3']);
        expect(await found('quux')).toEqual([]);
        expect(await found('QUOKKA')).toEqual(['msg_s4']);
        expect(await found('QUOKKA', { key_id: 'key_b' })).toEqual([]);
        expect(await found('unseen')).toEqual([]);
        expect(await found('0%_')).toEqual([]);
        expect(await found('"a"')).toEqual([]);
        expect(await found('hello')).toEqual(['msg_s2', 'msg_s1']);
        const first = await catalog.listCaptures(t.id, { limit: 1, search: 'hello' });
        expect((await catalog.listCaptures(t.id, { limit: 1, search: 'hello', cursor: first.next_cursor! })).data).toEqual([ann]);
      });

      it('deletes one capture, or all of a key or a tenant, from the list and the search alike', async () => {
        const [t, other] = [await newTenant(), await newTenant()];
        const at = (s: number) => new Date(Date.UTC(2024, 2, 1, 12, 0, s)).toISOString();
        const a = capture(t.id, 'msg_d1', at(1), { key_id: 'key_a', subject: 'Findable one' });
        const b = capture(t.id, 'msg_d2', at(2), { key_id: 'key_a', subject: 'Findable two' });
        const c = capture(t.id, 'msg_d3', at(3), { key_id: 'key_c', subject: 'Findable three' });
        const kept = capture(other.id, 'msg_d1', at(1), { key_id: 'key_a', subject: 'Findable elsewhere' });
        for (const x of [a, b, c, kept]) await catalog.putCapture(x);
        expect(await catalog.deleteCapture(t.id, 'msg_d1')).toBe(true);
        expect(await catalog.deleteCapture(t.id, 'msg_d1')).toBe(false);
        expect(await catalog.getCapture(t.id, 'msg_d1')).toBeNull();
        expect((await catalog.listCaptures(t.id, { limit: 10, search: 'findable' })).data).toEqual([c, b]);
        expect(await catalog.deleteCaptures(t.id, 'key_a')).toBe(1);
        expect((await catalog.listCaptures(t.id, { limit: 10 })).data).toEqual([c]);
        expect(await catalog.deleteCaptures(t.id)).toBe(1);
        expect(await catalog.listCaptures(t.id, { limit: 10, search: 'findable' })).toEqual({ data: [], next_cursor: null });
        expect((await catalog.listCaptures(other.id, { limit: 10, search: 'findable' })).data).toEqual([kept]);
      });

      it('refuses a cursor it did not hand out with invalid_request on field cursor', async () => {
        const t = await newTenant();
        await catalog.putCapture(capture(t.id, 'msg_1', '2024-03-01T12:00:00.000Z'));
        for (const cursor of [...BAD_CURSORS, encodeCursor(['b@x.test'])]) {
          const error = await expectError(catalog.listCaptures(t.id, { limit: 1, cursor }), 'invalid_request');
          expect(error.details).toEqual([{ field: 'cursor', message: expect.any(String) }]);
        }
      });
    });

    describe('opens and clicks', () => {
      const hit = (
        tenant_id: string,
        message_id: string,
        n: number,
        created_at: string,
        type: 'email.opened' | 'email.clicked',
      ) => ({
        tenant_id,
        message_id,
        event: {
          id: unique('evt'),
          type,
          created_at,
          data: { to: 'ann@example.com', n, user_agent: null, url: 'https://a.example/é?x=1&y' },
        },
      });

      it("keeps each event once, and reads a message's back in time order, the order recorded within a millisecond", async () => {
        const t = await newTenant();
        const [a, b] = [unique('msg'), unique('msg')];
        const group = [
          hit(t.id, a, 1, '2024-03-01T12:00:00.001Z', 'email.clicked'),
          hit(t.id, b, 2, '2024-03-01T12:00:00.001Z', 'email.opened'),
          hit(t.id, a, 3, '2024-03-01T12:00:00.001Z', 'email.opened'),
        ];
        // A later group whose time is earlier (another host's clock): it goes where its time says.
        const earlier = hit(t.id, a, 0, '2024-03-01T11:59:59.999Z', 'email.clicked');
        await catalog.recordEngagement(group);
        // Delivered again (pub/sub is at least once), with another group: nothing twice.
        await catalog.recordEngagement([...group, earlier]);
        await catalog.recordEngagement([]);
        expect(await catalog.engagementOf(a)).toEqual([earlier.event, group[0]!.event, group[2]!.event]);
        expect(await catalog.engagementOf(b)).toEqual([group[1]!.event]);
        expect(await catalog.engagementOf(unique('msg'))).toEqual([]);
        // Its retention over, a message's go; another's stay.
        await catalog.forgetEngagement(a);
        await catalog.forgetEngagement(unique('msg'));
        expect(await catalog.engagementOf(a)).toEqual([]);
        expect(await catalog.engagementOf(b)).toEqual([group[1]!.event]);
      });
    });

    describe('inbox sessions', () => {
      it("answers a session's key until it expires, is deleted, or its key is revoked", async () => {
        const t = await newTenant();
        const key = await catalog.createKey(
          { id: unique('key'), tenant_id: t.id, kind: 'sandbox', name: null, prefix: 'gp_sandbox_ab' },
          unique('hash'),
        );
        const later = new Date(Date.now() + 3_600_000).toISOString();
        const [open, ended, expired] = [unique('session'), unique('session'), unique('session')];
        await catalog.createInboxSession({ hash: open, key_id: key.id, expires_at: later });
        await catalog.createInboxSession({ hash: ended, key_id: key.id, expires_at: later });
        await catalog.createInboxSession({
          hash: expired,
          key_id: key.id,
          expires_at: new Date(Date.now() - 1000).toISOString(),
        });
        expect(await catalog.inboxSessionKey(open)).toEqual(key);
        expect(await catalog.inboxSessionKey(expired)).toBeNull();
        expect(await catalog.inboxSessionKey(unique('session'))).toBeNull();
        await catalog.deleteInboxSession(ended);
        expect(await catalog.inboxSessionKey(ended)).toBeNull();
        await catalog.revokeKey(t.id, key.id);
        expect(await catalog.inboxSessionKey(open)).toBeNull();
      });
    });

    describe('webhook endpoints', () => {
      const endpoint = (tenant_id: string, more: Partial<WebhookCreate> = {}): WebhookCreate => ({
        id: unique('whk'),
        tenant_id,
        url: 'https://hooks.example.com/gatepost?token=a%20b',
        events: ['email.sent', 'email.bounced'],
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        ...more,
      });

      it('creates an enabled endpoint with its secret and reads it back as created', async () => {
        const t = await newTenant();
        const fields = endpoint(t.id);
        const created = await catalog.createWebhook(fields);
        expect(created).toEqual({
          ...fields,
          enabled: true,
          disabled_reason: null,
          disabled_at: null,
          previous_secret: null,
          previous_secret_expires_at: null,
          created_at: expect.stringMatching(ISO),
          updated_at: created.created_at,
        });
        expect(await catalog.getWebhook(t.id, fields.id)).toEqual(created);
        expect(await catalog.getWebhook(unique('ten'), fields.id)).toBeNull();
        expect(await catalog.getWebhook(t.id, unique('whk'))).toBeNull();
      });

      it("lists a tenant's endpoints oldest first, and finds the enabled ones subscribed to an event type", async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const sent = await catalog.createWebhook(endpoint(a.id, { events: ['email.sent'] }));
        const both = await catalog.createWebhook(endpoint(a.id));
        const bounced = await catalog.createWebhook(endpoint(a.id, { events: ['email.bounced'] }));
        const off = await catalog.createWebhook(endpoint(a.id, { events: ['email.sent'] }));
        const theirs = await catalog.createWebhook(endpoint(b.id, { events: ['email.sent'] }));
        await catalog.updateWebhook(a.id, off.id, { enabled: false });

        expect((await catalog.listWebhooks(a.id)).map((w) => w.id)).toEqual(
          [sent, both, bounced, off].sort(byCreation).map((w) => w.id),
        );
        expect((await catalog.webhooksFor(a.id, 'email.sent')).map((w) => w.id)).toEqual(
          [sent, both].sort(byCreation).map((w) => w.id),
        );
        expect((await catalog.webhooksFor(a.id, 'email.bounced')).map((w) => w.id)).toEqual(
          [both, bounced].sort(byCreation).map((w) => w.id),
        );
        expect(await catalog.webhooksFor(a.id, 'email.opened')).toEqual([]);
        // An event type is matched whole, not as a substring or a pattern.
        expect(await catalog.webhooksFor(a.id, 'email.%')).toEqual([]);
        expect(await catalog.webhooksFor(a.id, 'sent')).toEqual([]);
        expect((await catalog.webhooksFor(b.id, 'email.sent')).map((w) => w.id)).toEqual([theirs.id]);
      });

      it('answers webhooksFor from the latest endpoints after every kind of change', async () => {
        const t = await newTenant();
        const ids = async () => (await catalog.webhooksFor(t.id, 'email.sent')).map((w) => w.id);
        expect(await ids()).toEqual([]);
        const w = await catalog.createWebhook(endpoint(t.id, { events: ['email.sent'] }));
        expect(await ids()).toEqual([w.id]);
        await catalog.updateWebhook(t.id, w.id, { events: ['email.bounced'] });
        expect(await ids()).toEqual([]);
        await catalog.updateWebhook(t.id, w.id, { events: ['email.sent'] });
        expect(await ids()).toEqual([w.id]);
        await catalog.disableWebhook(t.id, w.id, 'failing');
        expect(await ids()).toEqual([]);
        await catalog.updateWebhook(t.id, w.id, { enabled: true });
        expect(await ids()).toEqual([w.id]);
        await catalog.deleteWebhook(t.id, w.id);
        expect(await ids()).toEqual([]);
      });

      it('updates url and events; enabling clears a disabled reason; disabling by hand says manual', async () => {
        const t = await newTenant();
        const w = await catalog.createWebhook(endpoint(t.id));
        const changed = await catalog.updateWebhook(t.id, w.id, { url: 'https://new.example.com/h', events: ['email.opened'] });
        expect(changed).toEqual({
          ...w,
          url: 'https://new.example.com/h',
          events: ['email.opened'],
          updated_at: expect.stringMatching(ISO),
        });
        expect(await catalog.getWebhook(t.id, w.id)).toEqual(changed);

        const off = await catalog.updateWebhook(t.id, w.id, { enabled: false });
        expect(off).toMatchObject({ enabled: false, disabled_reason: 'manual', disabled_at: expect.stringMatching(ISO) });
        const on = await catalog.updateWebhook(t.id, w.id, { enabled: true });
        expect(on).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
        expect(await catalog.getWebhook(t.id, w.id)).toEqual(on);
        expect(await catalog.updateWebhook(t.id, unique('whk'), { enabled: false })).toBeNull();
        expect(await catalog.updateWebhook(unique('ten'), w.id, { enabled: false })).toBeNull();
      });

      it('disables for a reason once: the first reason stays', async () => {
        const t = await newTenant();
        const w = await catalog.createWebhook(endpoint(t.id));
        const gone = await catalog.disableWebhook(t.id, w.id, 'gone');
        expect(gone).toMatchObject({ enabled: false, disabled_reason: 'gone', disabled_at: expect.stringMatching(ISO) });
        expect(await catalog.disableWebhook(t.id, w.id, 'failing')).toEqual(gone);
        expect(await catalog.updateWebhook(t.id, w.id, { enabled: false })).toMatchObject({ disabled_reason: 'gone' });
        expect(await catalog.getWebhook(t.id, w.id)).toMatchObject({ disabled_reason: 'gone', disabled_at: gone!.disabled_at });
        expect(await catalog.webhooksFor(t.id, 'email.sent')).toEqual([]);
        expect(await catalog.disableWebhook(t.id, unique('whk'), 'gone')).toBeNull();
      });

      it('rotates the secret: the current one becomes the previous one, with its expiry', async () => {
        const t = await newTenant();
        const w = await catalog.createWebhook(endpoint(t.id));
        const expires = '2026-11-22T10:00:00.000Z';
        const rotated = await catalog.rotateWebhookSecret(t.id, w.id, 'whsec_plJ3nmyCDGBKInavdOK15jsl', expires);
        expect(rotated).toEqual({
          ...w,
          secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl',
          previous_secret: w.secret,
          previous_secret_expires_at: expires,
          updated_at: expect.stringMatching(ISO),
        });
        expect(await catalog.getWebhook(t.id, w.id)).toEqual(rotated);
        const again = await catalog.rotateWebhookSecret(t.id, w.id, 'whsec_third', '2026-11-23T10:00:00.000Z');
        expect(again).toMatchObject({ secret: 'whsec_third', previous_secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl' });
        expect(await catalog.rotateWebhookSecret(unique('ten'), w.id, 'whsec_x', expires)).toBeNull();
      });

      it('deletes one endpoint of one tenant', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const w = await catalog.createWebhook(endpoint(a.id));
        const keep = await catalog.createWebhook(endpoint(a.id));
        expect(await catalog.deleteWebhook(b.id, w.id)).toBe(false);
        expect(await catalog.deleteWebhook(a.id, w.id)).toBe(true);
        expect(await catalog.deleteWebhook(a.id, w.id)).toBe(false);
        expect(await catalog.getWebhook(a.id, w.id)).toBeNull();
        expect(await catalog.listWebhooks(a.id)).toEqual([keep]);
      });
    });

    describe('sending domains', () => {
      // Key material as the catalog sees it: opaque strings (tenancy/domains.ts makes real ones).
      const domain = (tenant_id: string, name: string): DomainCreate => ({
        id: unique('dom'),
        tenant_id,
        name,
        dkim: {
          rsa: {
            selector: 'gp202611r',
            public_key: 'MIIBIjANrsa',
            private_key: '-----BEGIN PRIVATE KEY-----\nrsa\n-----END PRIVATE KEY-----\n',
          },
          ed25519: {
            selector: 'gp202611e',
            public_key: 'ed25519pub',
            private_key: '-----BEGIN PRIVATE KEY-----\ned\n-----END PRIVATE KEY-----\n',
          },
        },
        tracking_host: null,
      });
      const uniqueName = () => `${unique('d').toLowerCase().replace('_', '-')}.example.com`;
      const found = { found: ['v=spf1 a:mx.example ~all'], matches: true, error: null };

      it('creates a pending domain with its keys and reads it back as created, for its tenant only', async () => {
        const t = await newTenant();
        const fields = domain(t.id, uniqueName());
        const created = await catalog.createDomain(fields);
        expect(created).toEqual({
          ...fields,
          status: 'pending',
          checks: {},
          checked_at: null,
          verified_at: null,
          created_at: expect.stringMatching(ISO),
          updated_at: created.created_at,
        });
        expect(await catalog.getDomain(t.id, fields.id)).toEqual(created);
        expect(await catalog.getDomain(unique('ten'), fields.id)).toBeNull();
        expect(await catalog.listDomains(t.id)).toEqual([created]);
        expect(await catalog.verifiedDomain(t.id, fields.name)).toBeNull();
        expect(await catalog.verifiedDomainNames(t.id)).toEqual([]);
      });

      it("keeps a tracking host from creation, changes and clears it, for the domain's tenant only", async () => {
        const t = await newTenant();
        const name = uniqueName();
        const d = await catalog.createDomain({ ...domain(t.id, name), tracking_host: `track.${name}` });
        expect(await catalog.getDomain(t.id, d.id)).toMatchObject({ tracking_host: `track.${name}` });
        expect(await catalog.setTrackingHost(unique('ten'), d.id, `links.${name}`)).toBeNull();
        const changed = await catalog.setTrackingHost(t.id, d.id, `links.${name}`);
        expect(changed).toEqual({ ...d, tracking_host: `links.${name}`, updated_at: expect.stringMatching(ISO) });
        expect(await catalog.getDomain(t.id, d.id)).toEqual(changed);
        expect(await catalog.setTrackingHost(t.id, d.id, null)).toMatchObject({ tracking_host: null });
        expect(await catalog.setTrackingHost(t.id, unique('dom'), null)).toBeNull();
      });

      it('finds a verified domain by its name whatever the tenant, and only a verified one', async () => {
        const t = await newTenant();
        const d = await catalog.createDomain(domain(t.id, uniqueName()));
        expect(await catalog.verifiedDomainByName(d.name)).toBeNull();
        const verified = await catalog.recordDomainCheck(t.id, d.id, { status: 'verified', checks: {} });
        expect(await catalog.verifiedDomainByName(d.name)).toEqual(verified);
        expect(await catalog.verifiedDomainByName(uniqueName())).toBeNull();
      });

      it("lists a tenant's domains oldest first", async () => {
        const t = await newTenant();
        const made = [];
        for (let i = 0; i < 3; i++) made.push(await catalog.createDomain(domain(t.id, uniqueName())));
        expect((await catalog.listDomains(t.id)).map((d) => d.id)).toEqual(made.sort(byCreation).map((d) => d.id));
      });

      it('refuses a name the tenant has already', async () => {
        const t = await newTenant();
        const name = uniqueName();
        await catalog.createDomain(domain(t.id, name));
        await expectError(catalog.createDomain(domain(t.id, name)), 'domain_exists');
        expect(await catalog.listDomains(t.id)).toHaveLength(1);
      });

      it('names the owner of a verified domain: no one while it is pending, its tenant once verified', async () => {
        const [t, other] = [await newTenant(), await newTenant()];
        const name = uniqueName();
        const d = await catalog.createDomain(domain(t.id, name));
        await catalog.createDomain(domain(other.id, name));
        expect(await catalog.domainOwner(name)).toBeNull();
        await catalog.recordDomainCheck(t.id, d.id, { status: 'verified', checks: {} });
        expect(await catalog.domainOwner(name)).toBe(t.id);
        expect(await catalog.domainOwner(uniqueName())).toBeNull();
      });

      it('records checks; verified_at is when it became verified, cleared when it falls back to pending', async () => {
        const t = await newTenant();
        const d = await catalog.createDomain(domain(t.id, uniqueName()));
        const pending = await catalog.recordDomainCheck(t.id, d.id, { status: 'pending', checks: { [`spf:${d.name}`]: found } });
        expect(pending).toEqual({
          ...d,
          checks: { [`spf:${d.name}`]: found },
          checked_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        });
        const verified = await catalog.recordDomainCheck(t.id, d.id, { status: 'verified', checks: {} });
        expect(verified).toMatchObject({ status: 'verified', verified_at: expect.stringMatching(ISO) });
        expect(await catalog.getDomain(t.id, d.id)).toEqual(verified);
        const again = await catalog.recordDomainCheck(t.id, d.id, { status: 'verified', checks: {} });
        expect(again!.verified_at).toBe(verified!.verified_at);
        expect(await catalog.verifiedDomainNames(t.id)).toEqual([d.name]);
        expect(await catalog.verifiedDomain(t.id, d.name)).toEqual(again);
        const lapsed = await catalog.recordDomainCheck(t.id, d.id, { status: 'pending', checks: {} });
        expect(lapsed).toMatchObject({ status: 'pending', verified_at: null });
        expect(await catalog.verifiedDomainNames(t.id)).toEqual([]);
        expect(await catalog.recordDomainCheck(t.id, unique('dom'), { status: 'verified', checks: {} })).toBeNull();
        expect(await catalog.recordDomainCheck(unique('ten'), d.id, { status: 'verified', checks: {} })).toBeNull();
      });

      it('lets several tenants hold a name pending; the first to verify it owns it', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const name = uniqueName();
        const ours = await catalog.createDomain(domain(a.id, name));
        const theirs = await catalog.createDomain(domain(b.id, name));
        await catalog.recordDomainCheck(a.id, ours.id, { status: 'verified', checks: {} });
        await expectError(catalog.recordDomainCheck(b.id, theirs.id, { status: 'verified', checks: {} }), 'domain_taken');
        expect(await catalog.getDomain(b.id, theirs.id)).toEqual(theirs);
        // Recording a failed check is still allowed: it verifies nothing.
        expect(await catalog.recordDomainCheck(b.id, theirs.id, { status: 'pending', checks: {} })).toMatchObject({
          status: 'pending',
        });
        await expectError(catalog.createDomain(domain((await newTenant()).id, name)), 'domain_taken');
        expect(await catalog.verifiedDomain(b.id, name)).toBeNull();

        // Once the owner lets it go, another tenant may verify it.
        expect(await catalog.deleteDomain(a.id, ours.id)).toBe(true);
        expect(await catalog.recordDomainCheck(b.id, theirs.id, { status: 'verified', checks: {} })).toMatchObject({
          status: 'verified',
        });
      });

      it('deletes one domain of one tenant', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const d = await catalog.createDomain(domain(a.id, uniqueName()));
        const keep = await catalog.createDomain(domain(a.id, uniqueName()));
        expect(await catalog.deleteDomain(b.id, d.id)).toBe(false);
        expect(await catalog.deleteDomain(a.id, d.id)).toBe(true);
        expect(await catalog.deleteDomain(a.id, d.id)).toBe(false);
        expect(await catalog.listDomains(a.id)).toEqual([keep]);
      });
    });

    // Receipt keys are the operator's, not a tenant's: this is the only test that makes any.
    describe('inbound routes and messages', () => {
      const route = (tenant_id: string, domain: string, match = `*@${domain}`) => ({
        id: unique('rte'),
        tenant_id,
        match,
        domain,
        action: 'webhook' as const,
        endpoint_id: null,
      });
      const uniqueDomain = () => `${unique('in').toLowerCase().replace('_', '-')}.example.com`;

      it('creates, reads, lists, updates and deletes routes, each tenant seeing only its own', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const domain = uniqueDomain();
        const created = await catalog.createInboundRoute(route(a.id, domain));
        expect(created).toEqual({
          ...route(a.id, domain),
          id: created.id,
          created_at: expect.stringMatching(ISO),
          updated_at: created.created_at,
        });
        const second = await catalog.createInboundRoute(route(a.id, domain, `support+*@${domain}`));
        expect(await catalog.getInboundRoute(a.id, created.id)).toEqual(created);
        expect(await catalog.getInboundRoute(b.id, created.id)).toBeNull();
        expect((await catalog.listInboundRoutes(a.id)).map((r) => r.id)).toEqual(
          [created, second].sort(byCreation).map((r) => r.id),
        );
        expect(await catalog.listInboundRoutes(b.id)).toEqual([]);
        const other = await catalog.createInboundRoute(route(b.id, uniqueDomain()));
        expect((await catalog.inboundRoutesOn(domain)).map((r) => r.id).sort()).toEqual([created.id, second.id].sort());
        expect(await catalog.inboundRoutesOn(other.domain)).toEqual([other]);

        const updated = await catalog.updateInboundRoute(a.id, created.id, { action: 'store', endpoint_id: undefined });
        expect(updated).toEqual({ ...created, action: 'store', updated_at: expect.stringMatching(ISO) });
        expect(await catalog.getInboundRoute(a.id, created.id)).toEqual(updated);
        expect(await catalog.updateInboundRoute(b.id, created.id, { action: 'store' })).toBeNull();
        await expectError(catalog.updateInboundRoute(a.id, created.id, { match: second.match }), 'inbound_route_exists');

        expect(await catalog.deleteInboundRoute(b.id, created.id)).toBe(false);
        expect(await catalog.deleteInboundRoute(a.id, created.id)).toBe(true);
        expect(await catalog.getInboundRoute(a.id, created.id)).toBeNull();
        expect(await catalog.deleteInboundRoute(a.id, created.id)).toBe(false);
      });

      it('refuses a second route with the same match for one tenant; another tenant may have it', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const domain = uniqueDomain();
        await catalog.createInboundRoute(route(a.id, domain));
        await expectError(catalog.createInboundRoute(route(a.id, domain)), 'inbound_route_exists');
        await catalog.createInboundRoute(route(b.id, domain));
        expect(await catalog.listInboundRoutes(a.id)).toHaveLength(1);
      });

      it('keeps a message with its raw bytes and attachments, for its tenant only, and a repeat changes nothing', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const raw = Buffer.from('Subject: hi\r\n\r\nbody \xff bytes\r\n', 'latin1');
        const attachment = {
          filename: 'a.bin',
          content_type: 'application/octet-stream',
          size: 3,
          content_id: null,
          content: Buffer.from([0, 255, 7]),
        };
        const message = {
          id: unique('inm'),
          tenant_id: a.id,
          route_id: unique('rte'),
          mail_from: '',
          rcpt_to: ['x@example.com'],
          remote_address: '127.0.0.1',
          received_at: new Date().toISOString(),
          payload: { subject: 'hi', auth: { spf: { result: 'pass' } } },
        };
        await catalog.putInboundMessage({ ...message, raw, attachments: [attachment] });
        await catalog.putInboundMessage({ ...message, payload: { subject: 'changed' }, raw: Buffer.from('x'), attachments: [] });
        expect(await catalog.getInboundMessage(a.id, message.id)).toEqual({ ...message, size: raw.length });
        expect(await catalog.getInboundMessage(b.id, message.id)).toBeNull();
        expect(await catalog.inboundRaw(a.id, message.id)).toEqual(raw);
        expect(await catalog.inboundRaw(b.id, message.id)).toBeNull();
        expect(await catalog.inboundAttachment(a.id, message.id, 0)).toEqual(attachment);
        expect(await catalog.inboundAttachment(a.id, message.id, 1)).toBeNull();
        expect(await catalog.inboundAttachment(b.id, message.id, 0)).toBeNull();
      });

      it("lists a tenant's messages newest first, a page at a time", async () => {
        const t = await newTenant();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          const id = unique('inm');
          ids.push(id);
          await catalog.putInboundMessage({
            id,
            tenant_id: t.id,
            route_id: 'rte_1',
            mail_from: '',
            rcpt_to: ['b@example.com'],
            remote_address: '127.0.0.1',
            received_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
            payload: {},
            raw: Buffer.from(`m${i}`),
            attachments: [],
          });
        }
        const pages = await allPages((cursor) => catalog.listInboundMessages(t.id, { limit: 2, cursor }));
        expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
        expect(pages.flat().map((m) => m.id)).toEqual([...ids].reverse());
        for (const bad of BAD_CURSORS)
          await expectError(catalog.listInboundMessages(t.id, { limit: 2, cursor: bad }), 'invalid_request');
      });
    });

    describe('audiences and contacts', () => {
      const contact = (tenant_id: string, audience_id: string, email: string) => ({
        id: unique('con'),
        tenant_id,
        audience_id,
        email,
        name: 'Ann',
        data: { plan: 'pro', visits: 3 },
        unsubscribed: false,
      });

      it('creates, reads, lists and deletes audiences, each tenant seeing only its own, with their contacts counted', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const created = await catalog.createAudience({ id: unique('aud'), tenant_id: a.id, name: 'Newsletter' });
        expect(created).toEqual({
          id: created.id,
          tenant_id: a.id,
          name: 'Newsletter',
          contacts: 0,
          created_at: expect.stringMatching(ISO),
        });
        const second = await catalog.createAudience({ id: unique('aud'), tenant_id: a.id, name: 'Customers' });
        await catalog.createContact(contact(a.id, created.id, 'ann@example.com'));
        expect(await catalog.getAudience(a.id, created.id)).toEqual({ ...created, contacts: 1 });
        expect(await catalog.getAudience(b.id, created.id)).toBeNull();
        expect((await catalog.listAudiences(a.id)).map((x) => [x.id, x.contacts])).toEqual(
          [created, second].sort(byCreation).map((x) => [x.id, x.id === created.id ? 1 : 0]),
        );
        expect(await catalog.listAudiences(b.id)).toEqual([]);
        expect(await catalog.deleteAudience(b.id, created.id)).toBe(false);
        expect(await catalog.deleteAudience(a.id, created.id)).toBe(true);
        expect(await catalog.getAudience(a.id, created.id)).toBeNull();
        expect(await catalog.getContact(a.id, created.id, 'ann@example.com')).toBeNull();
      });

      it('adds, gets by id or email, updates, pages and removes contacts; an email is one contact per audience', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const aud = await catalog.createAudience({ id: unique('aud'), tenant_id: a.id, name: 'News' });
        const ann = await catalog.createContact(contact(a.id, aud.id, 'ann@example.com'));
        expect(ann).toEqual({
          ...contact(a.id, aud.id, 'ann@example.com'),
          id: ann.id,
          created_at: expect.stringMatching(ISO),
          updated_at: ann.created_at,
        });
        expect(await catalog.getContact(a.id, aud.id, ann.id)).toEqual(ann);
        expect(await catalog.getContact(a.id, aud.id, 'ANN@example.com')).toEqual(ann);
        expect(await catalog.getContact(b.id, aud.id, ann.id)).toBeNull();
        await expectError(catalog.createContact(contact(a.id, aud.id, 'ann@example.com')), 'contact_exists');

        const bob = await catalog.createContact(contact(a.id, aud.id, 'bob@example.com'));
        await expectError(catalog.updateContact(a.id, aud.id, bob.id, { email: 'ann@example.com' }), 'contact_exists');
        const changed = await catalog.updateContact(a.id, aud.id, bob.id, { unsubscribed: true, data: { plan: 'free' } });
        expect(changed).toEqual({ ...bob, unsubscribed: true, data: { plan: 'free' }, updated_at: expect.stringMatching(ISO) });
        expect(await catalog.getContact(a.id, aud.id, bob.id)).toEqual(changed);
        expect(await catalog.updateContact(b.id, aud.id, bob.id, { name: 'x' })).toBeNull();

        for (let i = 0; i < 5; i++) await catalog.createContact(contact(a.id, aud.id, `p${i}@example.com`));
        const pages = await allPages((cursor) => catalog.listContacts(a.id, aud.id, { limit: 3, cursor }));
        expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
        const ids = pages.flat().map((c) => c.id);
        expect(ids).toEqual([...ids].sort());
        expect(ids).toContain(ann.id);
        expect((await catalog.listContacts(b.id, aud.id, { limit: 10 })).data).toEqual([]);
        for (const cursor of BAD_CURSORS)
          await expectError(catalog.listContacts(a.id, aud.id, { limit: 3, cursor }), 'invalid_request');

        expect(await catalog.deleteContact(b.id, aud.id, ann.id)).toBe(false);
        expect(await catalog.deleteContact(a.id, aud.id, ann.id)).toBe(true);
        expect(await catalog.getContact(a.id, aud.id, ann.id)).toBeNull();
      });

      it('upserts by email: new ones added, known ones updated with their data merged, counted apart', async () => {
        const a = await newTenant();
        const aud = await catalog.createAudience({ id: unique('aud'), tenant_id: a.id, name: 'News' });
        const ann = await catalog.createContact({ ...contact(a.id, aud.id, 'ann@example.com'), unsubscribed: true });
        const cy = unique('con');
        const result = await catalog.upsertContacts(a.id, aud.id, [
          { id: unique('con'), email: 'ann@example.com', data: { visits: 4, city: 'Oslo' } },
          { id: cy, email: 'cy@example.com', name: 'Cy', data: { city: 'Rome' } },
        ]);
        expect(result).toEqual({ added: 1, updated: 1, added_ids: [cy] });
        // Absent fields keep what the contact had; data is merged key by key.
        expect(await catalog.getContact(a.id, aud.id, ann.id)).toEqual({
          ...ann,
          data: { plan: 'pro', visits: 4, city: 'Oslo' },
          updated_at: expect.stringMatching(ISO),
        });
        expect(await catalog.getContact(a.id, aud.id, 'cy@example.com')).toMatchObject({
          name: 'Cy',
          data: { city: 'Rome' },
          unsubscribed: false,
        });
        expect(
          await catalog.upsertContacts(a.id, aud.id, [
            { id: unique('con'), email: 'ann@example.com', name: null, data: {}, unsubscribed: false },
          ]),
        ).toEqual({
          added: 0,
          updated: 1,
          added_ids: [],
        });
        expect(await catalog.getContact(a.id, aud.id, ann.id)).toMatchObject({ name: null, unsubscribed: false });
        expect((await catalog.getAudience(a.id, aud.id))!.contacts).toBe(2);
      });
    });

    describe('queue snapshots', () => {
      const row = (tenant: string, waiting: number) => ({
        tenant_id: tenant,
        destination: 'example.com',
        waiting,
        in_flight: 1,
        oldest_queued_at: 1_700_000_000_000,
      });

      it("keeps one snapshot per host, the newest, and answers every host's rows", async () => {
        await catalog.putQueueSnapshot('host-a', [row('ten_a', 5)]);
        await catalog.putQueueSnapshot('host-b', [row('ten_b', 2), row('ten_c', 0)]);
        await catalog.putQueueSnapshot('host-a', [row('ten_a', 3)]);
        const rows = await catalog.queueSnapshotRows(60_000);
        expect(rows.sort((x, y) => x.tenant_id.localeCompare(y.tenant_id))).toEqual([
          row('ten_a', 3),
          row('ten_b', 2),
          row('ten_c', 0),
        ]);

        await catalog.deleteQueueSnapshot('host-b');
        expect(await catalog.queueSnapshotRows(60_000)).toEqual([row('ten_a', 3)]);
        // A host with nothing queued tells so: its rows go, its snapshot stays.
        await catalog.putQueueSnapshot('host-a', []);
        expect(await catalog.queueSnapshotRows(60_000)).toEqual([]);
      });
    });

    describe('automations', () => {
      const automation = (tenantId: string, audienceId: string, over: Partial<AutomationCreate> = {}): AutomationCreate => ({
        id: unique('aut'),
        tenant_id: tenantId,
        name: 'Welcome',
        audience_id: audienceId,
        trigger: { type: 'contact_added' },
        steps: [
          { id: 'pause', type: 'wait', duration: 'PT10M', seconds: 600 },
          { id: 'hello', type: 'send', template: 'welcome', from: 'Shop <hi@shop.example>' },
        ],
        sandbox: true,
        key_id: 'key_1',
        ...over,
      });

      it('creates, finds by trigger, renames, disables and deletes automations, each tenant its own', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const aud = await catalog.createAudience({ id: unique('aud'), tenant_id: a.id, name: 'News' });
        // Asked before there is any: an answer kept for the events to come must not outlive a change.
        expect(await catalog.automationsTriggeredBy(a.id, 'custom_event', 'signed_up')).toEqual([]);
        const made = await catalog.createAutomation(automation(a.id, aud.id));
        expect(made).toEqual({
          ...automation(a.id, aud.id, { id: made.id }),
          enabled: true,
          created_at: expect.stringMatching(ISO),
          updated_at: made.created_at,
        });
        const opened = await catalog.createAutomation(
          automation(a.id, aud.id, { trigger: { type: 'email_event', event: 'email.opened' } }),
        );
        const custom = await catalog.createAutomation(
          automation(a.id, aud.id, { trigger: { type: 'custom_event', name: 'signed_up' } }),
        );
        expect(await catalog.getAutomation(a.id, made.id)).toEqual(made);
        expect(await catalog.getAutomation(b.id, made.id)).toBeNull();
        expect((await catalog.listAutomations(a.id)).map((x) => x.id)).toEqual(
          [made, opened, custom].sort(byCreation).map((x) => x.id),
        );
        expect(await catalog.listAutomations(b.id)).toEqual([]);

        const ids = async (type: AutomationTrigger['type'], key: string) =>
          (await catalog.automationsTriggeredBy(a.id, type, key)).map((x) => x.id);
        expect(await ids('contact_added', aud.id)).toEqual([made.id]);
        expect(await ids('email_event', 'email.opened')).toEqual([opened.id]);
        expect(await ids('email_event', 'email.clicked')).toEqual([]);
        expect(await ids('custom_event', 'signed_up')).toEqual([custom.id]);
        expect(await catalog.automationsTriggeredBy(b.id, 'custom_event', 'signed_up')).toEqual([]);

        const off = await catalog.updateAutomation(a.id, made.id, { enabled: false, name: 'Hello' });
        expect(off).toEqual({ ...made, enabled: false, name: 'Hello', updated_at: expect.stringMatching(ISO) });
        expect(await catalog.getAutomation(a.id, made.id)).toEqual(off);
        expect(await ids('contact_added', aud.id)).toEqual([]);
        expect(await catalog.updateAutomation(b.id, made.id, { enabled: true })).toBeNull();

        expect(await catalog.deleteAutomation(b.id, made.id)).toBe(false);
        expect(await catalog.deleteAutomation(a.id, made.id)).toBe(true);
        expect(await catalog.getAutomation(a.id, made.id)).toBeNull();
        expect(await catalog.deleteAutomation(a.id, custom.id)).toBe(true);
        expect(await ids('custom_event', 'signed_up')).toEqual([]);
      });

      it('records a contact added to an audience an automation starts on, with the contact, until its runs are acknowledged', async () => {
        const a = await newTenant();
        const [welcomed, plain] = [
          await catalog.createAudience({ id: unique('aud'), tenant_id: a.id, name: 'Welcomed' }),
          await catalog.createAudience({ id: unique('aud'), tenant_id: a.id, name: 'Plain' }),
        ];
        await catalog.createAutomation(automation(a.id, welcomed.id));
        // An automation on another trigger, or disabled, records nothing.
        await catalog.createAutomation(automation(a.id, plain.id, { trigger: { type: 'custom_event', name: 'x' } }));
        const off = await catalog.createAutomation(automation(a.id, plain.id));
        await catalog.updateAutomation(a.id, off.id, { enabled: false });
        const person = (audience_id: string, email: string) => ({
          id: unique('con'),
          tenant_id: a.id,
          audience_id,
          email,
          name: null,
          data: {},
          unsubscribed: false,
        });
        const ann = await catalog.createContact(person(welcomed.id, 'ann@example.com'));
        await catalog.createContact(person(plain.id, 'ann@example.com'));
        // A contact refused (there already) records nothing either.
        await expectError(catalog.createContact(person(welcomed.id, 'ann@example.com')), 'contact_exists');
        const bo = unique('con');
        await catalog.upsertContacts(a.id, welcomed.id, [
          { id: unique('con'), email: 'ann@example.com', data: { visits: 1 } },
          { id: bo, email: 'bo@example.com', data: {} },
        ]);
        await catalog.upsertContacts(a.id, plain.id, [{ id: unique('con'), email: 'cy@example.com', data: {} }]);
        const owed = async () =>
          (await catalog.pendingContactTriggers(new Date(Date.now() + 60_000).toISOString(), 10_000)).filter(
            (t) => t.tenant_id === a.id,
          );
        const byId = (x: { contact_id: string }, y: { contact_id: string }) => x.contact_id.localeCompare(y.contact_id);
        expect((await owed()).sort(byId)).toEqual(
          [
            { contact_id: ann.id, tenant_id: a.id, audience_id: welcomed.id, email: 'ann@example.com' },
            { contact_id: bo, tenant_id: a.id, audience_id: welcomed.id, email: 'bo@example.com' },
          ].sort(byId),
        );
        // Only those added before the time given.
        expect(await catalog.pendingContactTriggers('2000-01-01T00:00:00.000Z', 10)).toEqual([]);
        await catalog.ackContactTriggers([ann.id]);
        await catalog.ackContactTriggers([]);
        expect((await owed()).map((t) => t.contact_id)).toEqual([bo]);
        await catalog.ackContactTriggers([bo, ann.id]);
        expect(await owed()).toEqual([]);
      });

      it("lists an automation's runs newest first, rewrites a run in place, and keeps none of a deleted automation", async () => {
        const a = await newTenant();
        const aud = await catalog.createAudience({ id: unique('aud'), tenant_id: a.id, name: 'News' });
        const made = await catalog.createAutomation(automation(a.id, aud.id));
        const run = (n: number): AutomationRun => ({
          id: unique('run'),
          tenant_id: a.id,
          automation_id: made.id,
          contact_id: unique('con'),
          email: `p${n}@example.com`,
          status: 'waiting',
          reason: null,
          started_at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
          updated_at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
        });
        const runs = [0, 1, 2, 3, 4].map(run);
        for (const r of runs) await catalog.putAutomationRun(r);
        const stopped = { ...runs[2]!, status: 'stopped' as const, reason: 'unsubscribed', updated_at: new Date().toISOString() };
        await catalog.putAutomationRun(stopped);
        // A mirror of an earlier state arriving late changes nothing.
        await catalog.putAutomationRun(runs[2]!);

        const pages = await allPages((cursor) => catalog.listAutomationRuns(a.id, made.id, { limit: 2, cursor }));
        expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
        expect(pages.flat()).toEqual([runs[4], runs[3], stopped, runs[1], runs[0]]);
        for (const cursor of BAD_CURSORS)
          await expectError(catalog.listAutomationRuns(a.id, made.id, { limit: 2, cursor }), 'invalid_request');

        await catalog.deleteAutomation(a.id, made.id);
        // A run still stopping writes nothing back for an automation that is gone.
        await catalog.putAutomationRun(runs[0]!);
        expect((await catalog.listAutomationRuns(a.id, made.id, { limit: 10 })).data).toEqual([]);
      });
    });

    describe('broadcasts', () => {
      const draft = (tenantId: string, name: string) => ({
        id: unique('bro'),
        tenant_id: tenantId,
        name,
        audience_id: unique('aud'),
        from: 'News <news@shop.example>',
        subject: 'Hello {{name}}',
        html: '<p>Hi {{name}}</p>',
        text: null,
        template: null,
        data: { sale: 'spring' },
        sandbox: true,
      });

      it('creates drafts, pages them newest first, follows their status, and keeps them to their tenant', async () => {
        const [a, b] = [await newTenant(), await newTenant()];
        const first = await catalog.createBroadcast(draft(a.id, 'First'));
        expect(first).toEqual({
          ...draft(a.id, 'First'),
          id: first.id,
          audience_id: first.audience_id,
          status: 'draft',
          send_at: null,
          paused: null,
          progress: null,
          created_at: expect.stringMatching(ISO),
          updated_at: first.created_at,
        });
        expect(await catalog.getBroadcast(a.id, first.id)).toEqual(first);
        expect(await catalog.getBroadcast(b.id, first.id)).toBeNull();
        const more = [];
        for (let i = 0; i < 4; i++) more.push(await catalog.createBroadcast(draft(a.id, `More ${i}`)));
        const pages = await allPages((cursor) => catalog.listBroadcasts(a.id, { limit: 2, cursor }));
        expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
        expect(pages.flat().map((x) => x.id)).toEqual(
          [first, ...more]
            .sort(byCreation)
            .reverse()
            .map((x) => x.id),
        );
        expect((await catalog.listBroadcasts(b.id, { limit: 10 })).data).toEqual([]);
        for (const cursor of BAD_CURSORS)
          await expectError(catalog.listBroadcasts(a.id, { limit: 2, cursor }), 'invalid_request');

        const at = new Date(Date.now() + 3_600_000).toISOString();
        const progress = {
          admitted: 0,
          refused: { suppressed: 0, unsubscribed: 0, other: 0 },
          started_at: null,
          finished_at: null,
        };
        await catalog.setBroadcastState(a.id, first.id, { status: 'scheduled', send_at: at, paused: null, progress });
        await catalog.setBroadcastState(b.id, first.id, { status: 'cancelled', send_at: null, paused: null, progress });
        expect(await catalog.getBroadcast(a.id, first.id)).toMatchObject({
          status: 'scheduled',
          send_at: at,
          paused: null,
          progress,
        });
        const paused = { reason: "the tenant's daily send quota is used up", until: at };
        const sending = { ...progress, admitted: 500, refused: { suppressed: 2, unsubscribed: 1, other: 0 }, started_at: at };
        await catalog.setBroadcastState(a.id, first.id, { status: 'paused', send_at: at, paused, progress: sending });
        expect(await catalog.getBroadcast(a.id, first.id)).toMatchObject({ status: 'paused', paused, progress: sending });
        expect(await catalog.deleteBroadcast(b.id, first.id)).toBe(false);
        expect(await catalog.deleteBroadcast(a.id, first.id)).toBe(true);
        expect(await catalog.getBroadcast(a.id, first.id)).toBeNull();
      });

      it('counts each message once per kind of event, however often it is told', async () => {
        const a = await newTenant();
        const { id } = await catalog.createBroadcast(draft(a.id, 'Counted'));
        const zero = { sent: 0, bounced: 0, opened: 0, clicked: 0, unsubscribed: 0, complained: 0 };
        expect(await catalog.broadcastCounts(id)).toEqual(zero);
        const count = (kind: 'sent' | 'opened', message_id: string) =>
          catalog.countBroadcastEvent({ broadcast_id: id, kind, message_id });
        await Promise.all([count('sent', 'msg_1'), count('sent', 'msg_2'), count('sent', 'msg_1'), count('opened', 'msg_1')]);
        await count('opened', 'msg_1');
        expect(await catalog.broadcastCounts(id)).toEqual({ ...zero, sent: 2, opened: 1 });
        await catalog.deleteBroadcast(a.id, id);
        expect(await catalog.broadcastCounts(id)).toEqual(zero);
      });
    });

    describe('receipt keys', () => {
      const newKey = (n: number) => ({
        kid: unique(`kid${n}`),
        public_jwk: { kty: 'OKP', crv: 'Ed25519', x: `x-of-key-${n}` },
        private_key: `-----BEGIN PRIVATE KEY-----\nkey ${n}\n-----END PRIVATE KEY-----\n`,
      });
      const publicPart = ({ private_key: _, ...k }: ReceiptKey) => k;

      it('makes one current key however many hosts race to make the first, rotates, and keeps retired keys listed', async () => {
        expect(await catalog.currentReceiptKey()).toBeNull();
        expect(await catalog.listReceiptKeys()).toEqual([]);

        const [one, two, three] = [newKey(1), newKey(2), newKey(3)];
        const raced = await Promise.all([one, two, three].map((k) => catalog.createReceiptKey(k)));
        const first = raced[0]!;
        for (const answer of raced) expect(answer).toEqual(first);
        expect([one.kid, two.kid, three.kid]).toContain(first.kid);
        const made = [one, two, three].find((k) => k.kid === first.kid)!;
        expect(first).toEqual({ ...made, created_at: expect.stringMatching(ISO), retired_at: null });
        expect(await catalog.currentReceiptKey()).toEqual(first);
        // A later create keeps the current key.
        expect(await catalog.createReceiptKey(newKey(4))).toEqual(first);

        const next = newKey(5);
        const rotated = await catalog.rotateReceiptKey(next);
        expect(rotated).toEqual({ ...next, created_at: expect.stringMatching(ISO), retired_at: null });
        expect(await catalog.currentReceiptKey()).toEqual(rotated);
        const listed = await catalog.listReceiptKeys();
        expect(listed).toEqual([{ ...publicPart(first), retired_at: expect.stringMatching(ISO) }, publicPart(rotated)]);
        expect(listed[0]!.retired_at! >= first.created_at).toBe(true);
        expect(listed.every((k) => !('private_key' in k))).toBe(true);

        // Rotations at once each leave exactly one current key, and lose none.
        const more = [newKey(6), newKey(7), newKey(8)];
        await Promise.all(more.map((k) => catalog.rotateReceiptKey(k)));
        const after = await catalog.listReceiptKeys();
        expect(after.map((k) => k.kid).sort()).toEqual([first.kid, rotated.kid, ...more.map((k) => k.kid)].sort());
        const current = after.filter((k) => k.retired_at === null);
        expect(current).toHaveLength(1);
        expect((await catalog.currentReceiptKey())!.kid).toBe(current[0]!.kid);
      });
    });

    describe('breaker states', () => {
      it("keeps each tenant's latest transition, and never lets one heard late replace a newer one", async () => {
        const [a, b] = [unique('ten'), unique('ten')];
        await catalog.putBreakerState(a, 'open', 2_000);
        await catalog.putBreakerState(b, 'warning', 1_000);
        // Heard late: the transition at 1 s came before the one kept, at 2 s.
        await catalog.putBreakerState(a, 'warning', 1_000);
        const mine = async () => (await catalog.breakerStates()).filter((r) => r.tenant_id === a || r.tenant_id === b);
        expect(await mine()).toEqual(
          [
            { tenant_id: a, status: 'open' },
            { tenant_id: b, status: 'warning' },
          ].sort((x, y) => x.tenant_id.localeCompare(y.tenant_id)),
        );
        await catalog.putBreakerState(a, 'half_open', 3_000);
        expect((await mine()).find((r) => r.tenant_id === a)).toEqual({ tenant_id: a, status: 'half_open' });
      });
    });
  });
}
