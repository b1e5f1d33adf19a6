// Issue 20, item 4: about 85 refused sends of a 15 MB html containing {{x}} grew the heap by some
// 48 MB each (the render caches kept every source) until the process died. Size limits now apply
// before any work and every cache is bounded by bytes: 500 such requests leave the process
// healthy, and its resident memory comes back under a limit.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EmbeddedProcess, eventually, TEST_RUNTIME } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';

const suite = gatepostWithRelay();

const REQUESTS = 500;
const AT_ONCE = 4;
/** Resident memory the process may keep above what it had before the requests. */
const ALLOWED_GROWTH_MIB = 200;

function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!;
  return Number(kb) / 1024;
}

// The Dapr topology serves HTTP from another process than the one the harness starts.
describe.skipIf(TEST_RUNTIME === 'dapr')('soak', () => {
  it(`answers ${REQUESTS} sends of a 15 MB template with 413, stays healthy, and gives its memory back`, async () => {
    const pid = (suite.gp as EmbeddedProcess).pid!;
    const body = JSON.stringify({
      from: 'a@sender.example',
      to: 'b@example.com',
      subject: 'big',
      html: `<p>{{x}}${'x'.repeat(15 * 1024 * 1024)}</p>`,
      data: { x: 'y' },
    });
    const before = rssMiB(pid);
    let sent = 0;
    const sender = async () => {
      while (sent < REQUESTS) {
        sent++;
        const res = await suite.gp.request('POST', '/v1/emails', { key: suite.tenant.sandbox, body });
        expect(res.status).toBe(413);
        expect(res.body.error.code).toBe('message_too_large');
        if (sent % 50 === 0) expect((await suite.gp.request('GET', '/healthz')).status).toBe(200);
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, sender));
    expect((await suite.gp.request('GET', '/healthz')).status).toBe(200);
    // Freed memory goes back as the garbage collector gets to it: wait until it has.
    await eventually(() => rssMiB(pid) < before + ALLOWED_GROWTH_MIB, 60_000, 500);
  }, 600_000);
});
