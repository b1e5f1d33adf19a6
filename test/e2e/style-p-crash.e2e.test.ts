// The Style P crash test (spec part 4 rules 3 and 4): a batch sent with an Idempotency-Key by the
// official Postmark client, Gatepost SIGKILLed while the batch is part-way through admission,
// restarted on the same data, and the batch retried with the same key: nothing of the cut-off
// attempt is sent on its own, and after the retry each recipient has exactly one mail.
import { Errors } from 'postmark';
import { describe, expect, it } from 'vitest';
import { WATCHDOG_MS } from '../../actors/message/message.actor.ts';
import { derivedId } from '../../lib/ids.ts';
import { eventually } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';
import { laterMailArrived } from '../harness/later.harness.ts';
import { stylePClient } from '../harness/style-p.harness.ts';

const suite = gatepostWithRelay();

/** 500 messages (Postmark's most), each To naming two addresses: 1000 mails in one atomic batch. */
const ITEMS = 500;

describe('SIGKILL during a Style P batch', () => {
  it('rolls the cut-off batch back, and its retry with the same key sends each recipient one mail', async () => {
    const t = await suite.gp.tenant();
    const recipients = (key: string, i: number) => [`p${i}a-${key}@example.com`, `p${i}b-${key}@example.com`];
    const messages = (key: string) =>
      Array.from({ length: ITEMS }, (_, i) => ({
        From: 'shop@sender.example',
        To: recipients(key, i).join(', '),
        Subject: `Crash ${i}`,
        HtmlBody: `<p>${i}</p>`,
      }));
    const batch = (key: string) => stylePClient(suite.gp, t.live, { idempotencyKey: key }).sendEmailBatch(messages(key));
    const messageOf = async (id: string) =>
      (await suite.gp.request('GET', `/v1/messages/${id}`, { key: t.live })).body as { status?: string; created_at: string };

    // A message of the batch exists, held, only while the batch is admitted and not yet decided.
    // Its id follows from the item's derived key, `<key>:<item>:<To address>`. Kill Gatepost when
    // it is seen held; should the batch be answered first (it won the race), try another batch.
    let key = '';
    let watched = '';
    let admittedAt = 0;
    for (let tries = 1; !watched; tries++) {
      expect(tries, 'a batch cut off part-way within five tries').toBeLessThanOrEqual(5);
      key = `crash-${Math.random().toString(36).slice(2)}`;
      let answered = false;
      const request = batch(key).then(
        () => void (answered = true),
        (error: Errors.PostmarkError) => error,
      );
      const id = derivedId('msg', t.id, 'live', `${key}:0:0`);
      const seen = await eventually(async () => {
        if (answered) return 'answered';
        const m = await messageOf(id);
        return m.status === 'held' ? m : false;
      }, 60_000);
      if (seen !== 'answered') await suite.gp.kill();
      // Cut off, the client sees the connection fail (status 0). A batch answered with an error
      // was rolled back by the gate itself, and is no cut-off batch.
      const failure = await request;
      if (failure && failure.statusCode !== 0) throw failure;
      if (!answered && seen !== 'answered') {
        watched = id;
        admittedAt = Date.parse(seen.created_at);
      } else if (seen !== 'answered') await suite.gp.start();
    }

    await suite.gp.start();
    // What the cut-off attempt admitted is still held, undecided; nothing of it went out on its own.
    // Held, that is, until its watchdog is due (WATCHDOG_MS after admission): then the batch, never
    // decided, is rolled back (presumed abort) and the message is no more. Only a restart slower
    // than that (a loaded machine) lets the watchdog come first; that is no write lost by the kill.
    const { status } = await messageOf(watched);
    if (Date.now() < admittedAt + WATCHDOG_MS) expect(status).toBe('held');
    else expect(['held', undefined]).toContain(status);
    const ours = () => suite.relay.received.filter((r) => r.to[0]!.endsWith(`-${key}@example.com`));
    // A mail sent after the restart arrives; nothing of the cut-off batch went out before it.
    await laterMailArrived(suite);
    expect(ours()).toEqual([]);

    // The client retries with the same key: the batch completes, every message once.
    const startedAt = Date.now();
    const results = await batch(key);
    const retryMs = Date.now() - startedAt;
    expect(results.map((r) => r.ErrorCode)).toEqual(Array(ITEMS).fill(0));
    expect(results[0]!.MessageID).toBe(watched);
    const everyone = Array.from({ length: ITEMS }, (_, i) => recipients(key, i)).flat();
    await eventually(() => new Set(ours().map((r) => r.to[0])).size === everyone.length, 120_000);
    // A mail sent after the retry arrives; by then every recipient has still one mail.
    await laterMailArrived(suite);
    const counts = new Map<string, number>();
    for (const r of ours()) counts.set(r.to[0]!, (counts.get(r.to[0]!) ?? 0) + 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.size).toBe(everyone.length);
    console.log(
      `Style P crash test: a ${ITEMS}-message batch (${everyone.length} mails) cut off by SIGKILL; ` +
        `its retry answered in ${retryMs} ms; ${ours().length} mails for ${everyone.length} recipients`,
    );
  });
});
