// What the end-to-end files of the compatibility styles (and of SMTP submission) look at besides
// the provider's answer: the relay (what arrived; what did not is checked after
// `laterMailArrived`), the timeline, and the sandbox capture inbox.
import { expect } from 'vitest';
import { eventually, type HttpAnswer } from './gatepost.harness.ts';
import type { Suite } from './suite.harness.ts';

/** An address no other test uses, so what the relay holds for it is this test's alone. */
export const uniqueAddress = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;

/** The error a send was refused with; fails the test if it was not refused. */
export async function refusalOf<E>(send: Promise<unknown>): Promise<E> {
  const error = await send.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the send should have been refused').not.toBeNull();
  return error as E;
}

export function observe(suite: Suite) {
  return {
    receivedFor: (to: string) => eventually(() => suite.relay.received.find((r) => r.to.includes(to))),
    /** How many mails the relay has taken for an address so far. */
    delivered: (to: string) => suite.relay.received.filter((r) => r.to.includes(to)).length,
    /** The message once sent, with its timeline. */
    sent: (id: string, key = suite.tenant.live) =>
      eventually(async () => {
        const t = await suite.gp.request('GET', `/v1/messages/${id}`, { key });
        return t.body.status === 'sent' ? t.body : undefined;
      }),
    /**
     * Waits until the inbox holds a capture for every address, reading it every 2 s (each read
     * lists it all). A large sandbox send waits for its own captures, so that the next test's
     * message is not queued behind them: on Dapr a thousand deliveries take longer than `captured`
     * waits.
     */
    allCaptured: (key: string, addresses: string[]) =>
      eventually(
        async () => {
          const seen = new Set<string>();
          let cursor: string | null = null;
          do {
            const page: HttpAnswer<{ data: { to: string }[]; next_cursor: string | null }> = await suite.gp.request(
              'GET',
              `/v1/sandbox/messages?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
              { key },
            );
            expect(page.status).toBe(200);
            for (const m of page.body.data) seen.add(m.to);
            cursor = page.body.next_cursor;
          } while (cursor);
          const missing = addresses.filter((a) => !seen.has(a));
          if (missing.length > 0) throw new Error(`${missing.length} of ${addresses.length} not captured, such as ${missing[0]}`);
          return true;
        },
        150_000,
        2000,
      ),
    /** The sandbox capture of the message to an address. */
    captured: (key: string, to: string) =>
      eventually(async () => {
        const inbox = await suite.gp.request('GET', '/v1/sandbox/messages', { key });
        return inbox.body.data.find((m: { to: string }) => m.to === to);
      }),
  };
}
