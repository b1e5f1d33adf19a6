// The one Style P error table: every coded error has a Postmark status and ErrorCode, and
// docs/compat-style-p.md shows exactly that table.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatepostError, errorCatalog, type ErrorCode } from '../../../errors/errors.catalog.ts';
import { statusAndCode, stylePFailure } from './style-p.errors.ts';

const codes = Object.keys(errorCatalog) as ErrorCode[];

describe('the Style P error table', () => {
  it('maps every coded error to a Postmark status and ErrorCode', () => {
    const postmarkStatuses = new Set([401, 404, 422, 429, 500, 503]);
    for (const code of codes) {
      const { status, errorCode } = statusAndCode(code);
      expect(postmarkStatuses).toContain(status);
      expect(errorCode).toBeGreaterThan(0);
    }
    expect(statusAndCode('attachments_unsupported')).toEqual({ status: 422, errorCode: 300 });
    expect(statusAndCode('invalid_api_key')).toEqual({ status: 401, errorCode: 10 });
    expect(stylePFailure(new GatepostError('quota_exceeded', 'q', { retryAfter: 30 }))).toMatchObject({
      status: 429,
      retryAfter: 30,
    });
    const invalid = stylePFailure(
      new GatepostError('invalid_request', 'x', { details: [{ field: 'reply_to', message: 'not a valid email address' }] }),
    );
    expect(invalid.body).toEqual({ ErrorCode: 300, Message: 'Invalid request: ReplyTo: not a valid email address.' });
  });

  it('is the table docs/compat-style-p.md shows', () => {
    const doc = readFileSync(new URL('../../../docs/compat-style-p.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d+) \| (\d+) \|$/gm)].map(([, code, status, errorCode]) => [
      code,
      Number(status),
      Number(errorCode),
    ]);
    expect(rows).toEqual(codes.map((code) => [code, statusAndCode(code).status, statusAndCode(code).errorCode]));
  });
});
