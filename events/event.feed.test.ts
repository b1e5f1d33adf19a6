// The tenant event feed on its own: cursors, a wait that ends when an event comes, duplicates
// left out, nothing kept for a tenant nobody reads, the bound per tenant, and a cursor of
// another process.
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from './email.event.ts';
import { EventFeed } from './event.feed.ts';

let n = 0;
const event = (sandbox = true): EventEnvelope => ({
  id: `evt_${++n}`,
  type: 'email.sent',
  created_at: new Date().toISOString(),
  data: { message_id: `msg_${n}`, sandbox },
});
const all = () => true;
const read = (feed: EventFeed, tenant: string, after?: string, waitMs = 0, signal = new AbortController().signal) =>
  feed.read(tenant, { after, limit: 100, waitMs, keep: all, signal });

describe('EventFeed', () => {
  it('answers nothing without a cursor, then the events after each cursor, tenant by tenant', async () => {
    const feed = new EventFeed();
    feed.push('ten_a', event());
    const start = await read(feed, 'ten_a');
    expect(start.data).toEqual([]);
    const [e1, e2, other] = [event(), event(), event()];
    feed.push('ten_a', e1);
    feed.push('ten_b', other);
    feed.push('ten_a', e2);
    const page = await read(feed, 'ten_a', start.cursor);
    expect(page.data).toEqual([e1, e2]);
    expect((await read(feed, 'ten_a', page.cursor)).data).toEqual([]);
  });

  it('holds a read open until an event comes, and ends it when its signal aborts', async () => {
    const feed = new EventFeed();
    const { cursor } = await read(feed, 'ten_a');
    const waiting = read(feed, 'ten_a', cursor, 30_000);
    const e = event();
    feed.push('ten_a', e);
    expect((await waiting).data).toEqual([e]);

    const stop = new AbortController();
    const held = read(feed, 'ten_a', (await read(feed, 'ten_a')).cursor, 30_000, stop.signal);
    stop.abort();
    expect((await held).data).toEqual([]);
  });

  it('leaves out an event given twice, and what `keep` refuses (but moves past it)', async () => {
    const feed = new EventFeed();
    const { cursor } = await read(feed, 'ten_a');
    const [live, sandboxed] = [event(false), event(true)];
    feed.push('ten_a', live);
    feed.push('ten_a', live);
    feed.push('ten_a', sandboxed);
    const page = await feed.read('ten_a', {
      after: cursor,
      limit: 100,
      waitMs: 0,
      keep: (e) => e.data.sandbox === true,
      signal: new AbortController().signal,
    });
    expect(page.data).toEqual([sandboxed]);
    expect((await read(feed, 'ten_a', cursor)).data).toEqual([live, sandboxed]);
  });

  it('keeps nothing for a tenant nobody reads the feed of', async () => {
    const feed = new EventFeed();
    const { cursor } = await read(feed, 'ten_a');
    const [unread, read1] = [event(), event()];
    feed.push('ten_b', unread);
    feed.push('ten_a', read1);
    expect((await read(feed, 'ten_b', cursor)).data).toEqual([]);
    expect((await read(feed, 'ten_a', cursor)).data).toEqual([read1]);
  });

  it('keeps the last 1,000 events of a tenant, and reads a former process’s cursor from the first kept', async () => {
    const feed = new EventFeed();
    await read(feed, 'ten_a');
    const events = Array.from({ length: 1_005 }, () => event());
    for (const e of events) feed.push('ten_a', e);
    const page = await feed.read('ten_a', {
      after: 'ffffffff.3',
      limit: 1_000,
      waitMs: 0,
      keep: all,
      signal: new AbortController().signal,
    });
    expect(page.data).toHaveLength(1_000);
    expect(page.data[0]).toEqual(events[5]);
  });
});
