// A positive signal to wait for before checking that a mail did not come: a later mail, sent after
// the one that must not arrive, and awaited at the relay. Committed messages are handed over to
// delivery in the order they were committed, so once the later one has arrived, one committed
// before it has been handed over too: a mail that was coming would have had its turn.
import { expect } from 'vitest';
import { uniqueAddress } from './compat.harness.ts';
import { eventually } from './gatepost.harness.ts';
import type { Received } from './relay.harness.ts';
import type { Suite } from './suite.harness.ts';

/**
 * Sends one more mail to an address of its own, with `send` (by default a live `POST /v1/emails`
 * of the suite's tenant), and waits until the relay has it.
 */
export async function laterMailArrived(suite: Suite, send?: (to: string) => Promise<void>): Promise<Received> {
  const to = uniqueAddress('later');
  if (send) await send(to);
  else {
    const res = await suite.gp.request('POST', '/v1/emails', {
      key: suite.tenant.live,
      body: { to, subject: 'Later', html: '<p>later</p>' },
    });
    expect(res.status).toBe(202);
  }
  return eventually(() => suite.relay.received.find((r) => r.to.includes(to)));
}
