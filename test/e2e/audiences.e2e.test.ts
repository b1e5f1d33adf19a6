// Audiences over real sockets, on both runtimes (the catalog is SQLite or PostgreSQL): a
// generated 100,000-row CSV streamed in as it is made, updated by a second import, and a file
// that cannot be read refused whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatepost, type GatepostProcess } from '../harness/gatepost.harness.ts';

let gp: GatepostProcess;
let key: string;

beforeAll(async () => {
  gp = await startGatepost();
  key = (await gp.tenant()).live;
});
afterAll(async () => {
  await gp?.dispose();
});

/** POSTs a CSV to the import, streamed from `chunks` as they are made. */
async function importCsv(audience: string, chunks: () => Generator<string>) {
  const source = chunks();
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = source.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
  const res = await fetch(`${gp.url}/v1/audiences/${audience}/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('CSV import', () => {
  it('streams a 100,000-row file in, and a second import updates by email', async () => {
    const made = await gp.request('POST', '/v1/audiences', { key, body: { name: 'Everyone' } });
    expect(made.status).toBe(201);
    const audience = made.body.id as string;
    function* everyone() {
      yield 'email,name,plan\n';
      for (let i = 0; i < 100_000; i += 1000) {
        let chunk = '';
        for (let j = i; j < i + 1000; j++) chunk += `person${j}@example.com,Person ${j},plan${j % 3}\n`;
        yield chunk;
      }
      yield 'person7@example.com,Again,x\n';
    }
    const first = await importCsv(audience, everyone);
    expect(first).toEqual({
      status: 200,
      body: {
        added: 100_000,
        updated: 0,
        refused_count: 1,
        refused: [{ row: 100_002, email: 'person7@example.com', reason: 'the email is on an earlier row of the file' }],
      },
    });
    expect((await gp.request('GET', `/v1/audiences/${audience}`, { key })).body.contacts).toBe(100_000);

    function* changes() {
      yield 'email,city\n';
      yield 'person5@example.com,Oslo\nnew@example.com,Rome\n';
    }
    expect(await importCsv(audience, changes)).toEqual({
      status: 200,
      body: { added: 1, updated: 1, refused_count: 0, refused: [] },
    });
    const person5 = await gp.request('GET', `/v1/audiences/${audience}/contacts/person5@example.com`, { key });
    expect(person5.body).toMatchObject({ name: 'Person 5', data: { plan: 'plan2', city: 'Oslo' }, unsubscribed: false });
  });

  it('refuses a file with a broken quote whole, and another tenant never sees the audience', async () => {
    const audience = (await gp.request('POST', '/v1/audiences', { key, body: { name: 'Broken' } })).body.id as string;
    function* broken() {
      yield 'email,name\na@example.com,Ann\nb@example.com,"Bob\n';
    }
    const res = await importCsv(audience, broken);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: { code: 'csv_invalid' } });
    expect((await gp.request('GET', `/v1/audiences/${audience}`, { key })).body.contacts).toBe(0);

    const other = (await gp.tenant()).live;
    const theirs = await gp.request('GET', `/v1/audiences/${audience}`, { key: other });
    expect([theirs.status, theirs.body.error.code]).toEqual([404, 'not_found']);
  });
});
