// The log never writes a credential, wherever it sits in a logged object; request ids are the
// client's only when they are sane.
import { Writable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { gatepostLog, gatheredLines, requestIdOf } from './log.ts';

function captured() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, log: gatepostLog('info', stream) };
}

describe('gatepostLog', () => {
  it('redacts keys, tokens, passwords, secrets and the Authorization headers', () => {
    const { lines, log } = captured();
    log.info(
      {
        key: 'gp_live_top',
        created: { id: 'key_1', key: 'gp_live_nested' },
        req: { headers: { authorization: 'Bearer gp_live_header', 'x-postmark-server-token': 'gp_live_postmark' } },
        headers: { authorization: 'Basic c2VjcmV0' },
        smtp: { password: 'gp_live_password' },
        endpoint: { secret: 'whsec_secret' },
        token: 'admin-token',
        kept: 'visible',
      },
      'a line',
    );
    const [line] = lines;
    for (const secret of ['gp_live_', 'c2VjcmV0', 'whsec_', 'admin-token']) expect(line).not.toContain(secret);
    const parsed = JSON.parse(line!);
    expect(parsed).toMatchObject({
      key: '[redacted]',
      created: { id: 'key_1', key: '[redacted]' },
      kept: 'visible',
      msg: 'a line',
    });
    expect(parsed.req.headers.authorization).toBe('[redacted]');
  });

  it('writes nothing below its level', () => {
    const { lines, log } = captured();
    log.debug({ a: 1 }, 'hidden');
    expect(lines).toEqual([]);
  });
});

describe('requestIdOf', () => {
  const req = (id?: string) => ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as IncomingMessage;

  it("keeps a client's sane x-request-id", () => {
    expect(requestIdOf(req('4bf92f35-77b3-4da6-a3ce-929d0e0e4736'))).toBe('4bf92f35-77b3-4da6-a3ce-929d0e0e4736');
  });

  it('makes one when there is none, or it is too long or holds other characters', () => {
    for (const given of [undefined, '', 'x'.repeat(129), 'a b', 'line\nbreak', '{"json":1}']) {
      expect(requestIdOf(req(given))).toMatch(/^req_[0-9a-z]{26}$/);
    }
  });
});

describe('gatheredLines', () => {
  function out() {
    const writes: string[] = [];
    let flushed = 0;
    return {
      writes,
      flushes: () => flushed,
      stream: gatheredLines({
        write: (s: string) => (writes.push(s), true),
        flush: (done?: (error?: Error) => void) => (flushed++, done?.()),
      }),
    };
  }

  it('writes the lines logged close together in one write, in order', async () => {
    const { writes, stream } = out();
    const log = gatepostLog('info', stream);
    for (const n of [1, 2, 3]) log.info({ n }, 'line');
    expect(writes).toEqual([]);
    await vi.waitFor(() => expect(writes).toHaveLength(1));
    expect(
      writes[0]!
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).n),
    ).toEqual([1, 2, 3]);
  });

  it('writes at once what fills its buffer, and what is left when flushed', () => {
    const { writes, flushes, stream } = out();
    const log = gatepostLog('info', stream);
    const long = 'x'.repeat(1_000);
    for (let n = 0; n < 20; n++) log.info({ n, long }, 'line');
    expect(writes).toHaveLength(1);
    const first = writes[0]!.trimEnd().split('\n').length;
    expect(first).toBeGreaterThanOrEqual(16);
    log.flush();
    expect(flushes()).toBe(1);
    expect(writes.slice(1).join('').trimEnd().split('\n')).toHaveLength(20 - first);
  });
});
