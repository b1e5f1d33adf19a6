// CSV import against a real SQLite catalog: per-row refusals, whole-file refusals that change
// nothing, updates by email, and a generated 100,000-row file streamed in.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatepostError } from '../errors/errors.catalog.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { MAX_RECORD_BYTES, MAX_REFUSED_LISTED, contactOfRow, importContacts } from './contacts.import.ts';

let dir: string;
let catalog: SqliteCatalog;
let n = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatepost-import-test-'));
  catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  await catalog.createTenant({ id: 'ten_import', name: 't', default_from: null, quota: { per_second: null, per_day: null } });
});
afterAll(async () => {
  await catalog.close();
  await rm(dir, { recursive: true, force: true });
});

const newAudience = async () => (await catalog.createAudience({ id: `aud_import${n++}`, tenant_id: 'ten_import', name: 'a' })).id;
const run = (audience: string, csv: string | Iterable<string>) =>
  importContacts(catalog, 'ten_import', audience, Readable.from(typeof csv === 'string' ? [csv] : csv));
const all = async (audience: string) => (await catalog.listContacts('ten_import', audience, { limit: 1000 })).data;

async function refusedWith(promise: Promise<unknown>): Promise<GatepostError> {
  const error = await promise.then(
    () => expect.fail('expected the file to be refused'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatepostError);
  expect(error).toMatchObject({ code: 'csv_invalid' });
  return error as GatepostError;
}

describe('contactOfRow', () => {
  it('takes email, name and unsubscribed by name, every other column into data, empty cells as absent', () => {
    expect(contactOfRow({ email: ' Ann@Example.com ', name: 'Ann', unsubscribed: 'yes', plan: 'pro', city: '' })).toEqual({
      id: expect.stringMatching(/^con_/),
      email: 'ann@example.com',
      name: 'Ann',
      unsubscribed: true,
      data: { plan: 'pro' },
    });
    expect(contactOfRow({ email: 'not an address' })).toBe('not a valid email address');
    expect(contactOfRow({ email: '' })).toBe('no email');
    expect(contactOfRow({ email: 'a@example.com', unsubscribed: 'maybe' })).toMatch(/unsubscribed/);
  });
});

describe('importContacts', () => {
  it('adds rows, refuses bad addresses and repeated emails row by row, and updates by email on a second import', async () => {
    const audience = await newAudience();
    const first = await run(
      audience,
      'Email,Name,plan\nann@example.com,Ann,pro\nnot-an-address,Bob,free\n"cy@example.com","Cy, Jr.",free\nANN@example.com,Ann again,x\n',
    );
    expect(first).toEqual({
      added: 2,
      updated: 0,
      refused_count: 2,
      refused: [
        { row: 3, email: 'not-an-address', reason: 'not a valid email address' },
        { row: 5, email: 'ann@example.com', reason: 'the email is on an earlier row of the file' },
      ],
    });
    expect((await all(audience)).map((c) => [c.email, c.name, c.data])).toEqual(
      expect.arrayContaining([
        ['ann@example.com', 'Ann', { plan: 'pro' }],
        ['cy@example.com', 'Cy, Jr.', { plan: 'free' }],
      ]),
    );
    const second = await run(audience, 'email,city\nann@example.com,Oslo\ndee@example.com,Rome\n');
    expect(second).toEqual({ added: 1, updated: 1, refused_count: 0, refused: [] });
    expect(await catalog.getContact('ten_import', audience, 'ann@example.com')).toMatchObject({
      name: 'Ann',
      data: { plan: 'pro', city: 'Oslo' },
    });
  });

  it('counts every refused row and lists the first ones', async () => {
    const audience = await newAudience();
    const rows = Array.from({ length: MAX_REFUSED_LISTED + 20 }, (_, i) => `bad${i}\n`);
    const report = await run(audience, ['email\n', ...rows, 'ok@example.com\n']);
    expect(report).toMatchObject({ added: 1, refused_count: MAX_REFUSED_LISTED + 20 });
    expect(report.refused).toHaveLength(MAX_REFUSED_LISTED);
    expect(report.refused[0]).toEqual({ row: 2, email: 'bad0', reason: 'not a valid email address' });
  });

  it.each([
    ['a quote never closed', 'email,name\na@example.com,Ann\nb@example.com,"Bob\n', /never closed/],
    ['a row wider than the header', 'email,name\na@example.com,Ann\nb@example.com,Bob,extra\n', /number of fields/],
    ['no email column', 'address,name\na@example.com,Ann\n', /no "email" column/],
    ['an empty file', '', /empty/],
    ['a column named twice', 'email,name,Name\na@example.com,A,B\n', /twice/],
  ])('refuses a file with %s whole, importing nothing', async (_what, csv, message) => {
    const audience = await newAudience();
    const error = await refusedWith(run(audience, csv));
    expect(error.message).toMatch(message);
    expect(await all(audience)).toEqual([]);
  });

  it('refuses a file of more rows than it takes whole', async () => {
    const audience = await newAudience();
    const csv = 'email\n' + Array.from({ length: 4 }, (_, i) => `p${i}@example.com\n`).join('');
    const error = await refusedWith(importContacts(catalog, 'ten_import', audience, Readable.from([csv]), { maxRows: 3 }));
    expect(error.message).toMatch(/more than 3 rows/);
    expect(await all(audience)).toEqual([]);
    expect(await importContacts(catalog, 'ten_import', audience, Readable.from([csv]), { maxRows: 4 })).toMatchObject({
      added: 4,
    });
  });

  it('tells its hook of the contacts each batch added, once committed, and of no contact it updated', async () => {
    const audience = await newAudience();
    await run(audience, 'email\nknown@example.com\n');
    const told: { id: string; email: string }[][] = [];
    const rows = Array.from({ length: 1500 }, (_, i) => `p${i}@example.com\n`).join('');
    const report = await importContacts(catalog, 'ten_import', audience, Readable.from([`email\nknown@example.com\n${rows}`]), {
      hooks: {
        added: async (contacts) => {
          // Committed before it is told: each is in the catalog with the id it is told of.
          for (const c of contacts) expect((await catalog.getContact('ten_import', audience, c.email))?.id).toBe(c.id);
          told.push(contacts.map(({ id, email }) => ({ id, email })));
        },
      },
    });
    expect(report).toMatchObject({ added: 1500, updated: 1 });
    expect(told.map((batch) => batch.length)).toEqual([999, 501]);
    expect(told.flat().map((c) => c.email)).toEqual(Array.from({ length: 1500 }, (_, i) => `p${i}@example.com`));
  });

  it('refuses a 10 MB line whole, naming its row, without reading the rest', async () => {
    const audience = await newAudience();
    const long = `x${'y'.repeat(10 * 1024 * 1024)}@example.com,Long\n`;
    const error = await refusedWith(run(audience, ['email,name\n', 'a@example.com,Ann\n', long, 'c@example.com,Cy\n']));
    expect(error.message).toContain(String(MAX_RECORD_BYTES));
    expect(error.details).toEqual([{ field: 'row 3', message: expect.any(String) }]);
    expect(await all(audience)).toEqual([]);
  });

  it('streams a generated 100,000-row file in', async () => {
    const audience = await newAudience();
    function* rows() {
      yield 'email,name,plan\n';
      for (let i = 0; i < 100_000; i += 1000) {
        let chunk = '';
        for (let j = i; j < i + 1000; j++) chunk += `person${j}@example.com,Person ${j},plan${j % 3}\n`;
        yield chunk;
      }
    }
    expect(await run(audience, rows())).toEqual({ added: 100_000, updated: 0, refused_count: 0, refused: [] });
    expect((await catalog.getAudience('ten_import', audience))!.contacts).toBe(100_000);
    expect(await catalog.getContact('ten_import', audience, 'person99999@example.com')).toMatchObject({
      name: 'Person 99999',
      data: { plan: 'plan0' },
    });
  });
});
