import { describe, expect, it } from 'vitest';
import { decodeWrites, encodeWrites, type EncodedWrites, type Write } from './committer.apply.ts';

describe('encoded writes (what the writer thread is posted)', () => {
  it('decode to the writes that were encoded, in order, across several turns', () => {
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
    const encoded: EncodedWrites = [];
    for (const writes of turns) encodeWrites(writes, encoded);
    expect(decodeWrites(encoded)).toEqual(turns.flat());
  });

  it('refuses what it cannot read rather than apply it wrongly', () => {
    expect(() => decodeWrites([9, 'x'])).toThrow(/unknown write code 9/);
  });
});
