// The error docs list every code with its HTTP status and SMTP reply, and nothing else.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalog } from './errors.catalog.ts';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (\d{3}) (\d\.\d\.\d) \|/gm)].map((m) => ({
  code: m[1]!,
  status: Number(m[2]),
  smtp: [Number(m[3]), m[4]!],
}));

describe('docs/errors.md', () => {
  it('documents every coded error with its HTTP status and SMTP reply', () => {
    const documented = Object.fromEntries(rows.map((r) => [r.code, { status: r.status, smtp: r.smtp }]));
    const catalogue = Object.fromEntries(
      Object.entries(errorCatalog).map(([code, e]) => [code, { status: e.status, smtp: [...e.smtp] }]),
    );
    expect(documented).toEqual(catalogue);
  });
});
