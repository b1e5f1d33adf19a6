// DATA held in memory up to the threshold and spooled to a file past it; nothing kept past the size limit.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { spool } from './inbound.spool.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const chunks = (n: number, size: number) => Readable.from(Array.from({ length: n }, (_, i) => Buffer.alloc(size, 97 + (i % 26))));
const expected = (n: number, size: number) => Buffer.concat(Array.from({ length: n }, (_, i) => Buffer.alloc(size, 97 + (i % 26))));
const files = () => {
  try {
    return readdirSync(join(dir, 'spool'));
  } catch {
    return [];
  }
};

describe('spool', () => {
  it('keeps a message under the threshold in memory, with no file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'spool-'));
    const kept = await spool(join(dir, 'spool'), chunks(4, 100), 10_000, 1000);
    expect(kept).toMatchObject({ bytes: 400, oversized: false });
    expect(files()).toEqual([]);
    expect(await kept.read()).toEqual(expected(4, 100));
  });

  it('streams a message past the threshold to a file, reads it back whole, and drops the file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'spool-'));
    const kept = await spool(join(dir, 'spool'), chunks(30, 100), 10_000, 1000);
    expect(kept).toMatchObject({ bytes: 3000, oversized: false });
    expect(files()).toHaveLength(1);
    expect(await kept.read()).toEqual(expected(30, 100));
    await kept.drop();
    expect(files()).toEqual([]);
  });

  it('keeps nothing of a message past the size limit, spooled or not', async () => {
    dir = mkdtempSync(join(tmpdir(), 'spool-'));
    expect(await spool(join(dir, 'spool'), chunks(30, 100), 2000, 1000)).toMatchObject({ bytes: 3000, oversized: true });
    expect(await spool(join(dir, 'spool'), chunks(30, 100), 2000, 10_000)).toMatchObject({ bytes: 3000, oversized: true });
    expect(files()).toEqual([]);
  });
});
