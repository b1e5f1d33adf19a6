// The queue's metrics read on the embedded runtime: what waits, counted per tenant, read through
// the index of waiting reminders, however many messages are kept.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite, type Db } from '../lib/sqlite.ts';
import { MIGRATIONS_DIR } from '../runtime/embedded/runtime.sqlite.ts';
import { MESSAGE_ACTOR } from '../actors/message/message.actor.ts';
import { DELIVERY_ACTOR } from '../actors/delivery/delivery.actor.ts';
import { QUEUE_SQL, queueReader } from './queue.embedded.ts';

const DAY_MS = 86_400_000;

/** The fields of a message's record the queue read uses. */
const recordOf = (tenant: string) =>
  JSON.stringify({ tenant_id: tenant, created_at: new Date().toISOString(), status: 'sent', sandbox: true });

describe('the embedded queue read', () => {
  let dir: string;
  let file: string;
  let db: Db;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatepost-queue-'));
    file = join(dir, 'actors.db');
    db = openSqlite(file, MIGRATIONS_DIR);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A message of `tenant` with `reminders` (name → due), as its actors would leave it. */
  function message(id: string, tenant: string, reminders: [type: string, name: string, due: number][]) {
    db.prepare('INSERT INTO actor_state VALUES (?, ?, ?, ?)').run(MESSAGE_ACTOR, id, 'record', recordOf(tenant));
    const remind = db.prepare('INSERT INTO reminders (actor_type, actor_id, name, due_at) VALUES (?, ?, ?, ?)');
    for (const [type, name, due] of reminders) remind.run(type, id, name, due);
  }

  /**
   * A message handed over and not yet taken: its `message.ready` row in the outbox, which names
   * its tenant and when it came to the queue (no record: the count reads none).
   */
  function handedOver(id: string, tenant: string, queued_at: number, sandbox = false) {
    db.prepare('INSERT INTO outbox (delivery_id, topic, data) VALUES (?, ?, ?)').run(
      `pub_${id}_${Math.random()}`,
      'message.ready',
      JSON.stringify(
        sandbox
          ? { message_id: id, sandbox, tenant_id: tenant, queued_at }
          : { message_id: id, sandbox, tenant_id: tenant, stream: 'transactional', destination: 'example.com', queued_at },
      ),
    );
  }

  it('counts the scheduled, ready and deferred messages of each tenant among thousands kept', () => {
    const now = Date.now();
    db.transaction(() => {
      // Delivered and captured messages: their watchdogs are due when their retention ends.
      for (let i = 0; i < 5_000; i++) message(`msg_kept${i}`, 'ten_a', [[MESSAGE_ACTOR, 'watch', now + 30 * DAY_MS]]);
      message('msg_later1', 'ten_a', [
        [MESSAGE_ACTOR, 'send', now + DAY_MS],
        [MESSAGE_ACTOR, 'watch', now + 2 * DAY_MS],
      ]);
      message('msg_later2', 'ten_b', [
        [MESSAGE_ACTOR, 'send', now + DAY_MS],
        [MESSAGE_ACTOR, 'watch', now + 2 * DAY_MS],
      ]);
      message('msg_retry', 'ten_b', [
        [DELIVERY_ACTOR, 'retry', now + 60_000],
        [MESSAGE_ACTOR, 'watch', now + 30 * DAY_MS],
      ]);
      handedOver('msg_ready1', 'ten_a', now - 90_000);
      handedOver('msg_ready2', 'ten_a', now - 30_000, true);
      // Handed over again (the watchdog's): still one message waiting.
      handedOver('msg_ready2', 'ten_a', now - 30_000, true);
    })();

    const rows = queueReader(file)
      .queue()
      .sort((a, b) => a.tenant_id.localeCompare(b.tenant_id));
    expect(rows.map(({ oldest_age_seconds: _, ...r }) => r)).toEqual([
      { tenant_id: 'ten_a', scheduled: 1, ready: 2, deferred: 0 },
      { tenant_id: 'ten_b', scheduled: 1, ready: 0, deferred: 1 },
    ]);
    // ten_a's oldest came to the queue 90 s ago; ten_b's deferred message was created just now.
    expect(rows[0]!.oldest_age_seconds).toBeGreaterThanOrEqual(90);
    expect(rows[0]!.oldest_age_seconds).toBeLessThan(120);
    expect(rows[1]!.oldest_age_seconds).toBeLessThan(30);
  });

  it("reads the waiting reminders through their own indexes, and only their messages' records", () => {
    const plan = db
      .prepare<Record<string, unknown>, { detail: string }>(`EXPLAIN QUERY PLAN ${QUEUE_SQL}`)
      .all({ message: MESSAGE_ACTOR, delivery: DELIVERY_ACTOR, ready: 'message.ready' })
      .map((r) => r.detail);
    expect(plan.filter((d) => d.includes('USING INDEX reminders_waiting'))).toHaveLength(2);
    // No read of every reminder, or of every message's state (an index searched by the actor type alone).
    expect(plan.filter((d) => /^SCAN (reminders|actor_state)\b|\(actor_type=\?\)/.test(d))).toEqual([]);
  });
});
