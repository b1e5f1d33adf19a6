import { describe, expect, it } from 'vitest';
import { decodeWrites, encode, type EncodedWrites, type Write } from './committer.apply.ts';

describe('encoded writes (what the writer thread is posted)', () => {
  it('decode to the writes that were encoded, every kind, in order, across several turns', () => {
    const turns: Write[][] = [
      [
        { kind: 'state', actorType: 'MessageActor', actorId: 'msg_1', key: 'record', value: '{"a":1}' },
        { kind: 'state', actorType: 'MessageActor', actorId: 'msg_1', key: 'gone', value: null },
        { kind: 'reminder', actorType: 'MessageActor', actorId: 'msg_1', name: 'watch', dueAt: 1_795_000_000_000, data: null },
        { kind: 'reminder', actorType: 'alarm', actorId: 'a', name: 'r', dueAt: 5, data: '{"n":[1,2]}' },
      ],
      [],
      [
        { kind: 'reminderDelete', actorType: 'MessageActor', actorId: 'msg_1', name: 'send' },
        { kind: 'outbox', seq: 7, deliveryId: 'pub_1', topic: 'message.ready', data: '{"message_id":"msg_1"}' },
        { kind: 'outboxDone', seq: 6 },
        { kind: 'state', actorType: 'TenantActor', actorId: 'ten_1', key: 'quota', value: '' },
      ],
    ];
    // Each write through its kind's encoder, as the runtime encodes a turn.
    const encoded: EncodedWrites = [];
    for (const w of turns.flat()) {
      if (w.kind === 'state') encode.state(encoded, w.actorType, w.actorId, w.key, w.value);
      else if (w.kind === 'reminder') encode.reminder(encoded, w.actorType, w.actorId, w.name, w.dueAt, w.data);
      else if (w.kind === 'reminderDelete') encode.reminderDelete(encoded, w.actorType, w.actorId, w.name);
      else if (w.kind === 'outbox') encode.outbox(encoded, w.seq, w.deliveryId, w.topic, w.data);
      else encode.outboxDone(encoded, w.seq);
    }
    expect(decodeWrites(encoded)).toEqual(turns.flat());
  });

  it('refuses what it cannot read rather than apply it wrongly', () => {
    expect(() => decodeWrites([9, 'x'])).toThrow(/unknown write code 9/);
  });
});
