// A Bloom filter over string keys that grows as keys are added: it answers "maybe" for every key it
// was given and "no" for most it was not, so a "no" can skip a SELECT that would find nothing.
// Keys are never taken out: a key whose row is gone only costs the SELECT again. The owner adds a
// key before the write that creates its row can be read, so "no" is never wrong; that needs the
// owner to be the only writer of what the filter covers, or to hear of every other writer's
// keys (store/postgres/changes.pg.ts, told by PostgreSQL's notifications).
//
// Uses: which actors have state on disk (runtime/embedded: activating a new message's actor costs
// no SELECT) and which addresses the catalog lists as suppressed (store/sqlite, store/postgres:
// admission's look-up of an address never suppressed costs no SELECT).

const BITS_PER_KEY = 10; // with 7 probes: about 1 % of absent keys answered "maybe"
const PROBES = 7;

interface Slice {
  bits: Uint32Array;
  size: number;
  count: number;
  capacity: number;
}

/** Two 32-bit hashes of the key (FNV-1a with two offsets), for double hashing. */
function hashes(key: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  return [h1 >>> 0, (h2 | 1) >>> 0];
}

export class PresenceFilter {
  /** When one slice is full, a twice larger one takes the new keys: memory follows the keys, ~1.2 bytes each. */
  private readonly slices: Slice[] = [];

  constructor(capacity: number) {
    this.grow(Math.max(capacity, 1 << 16));
  }

  add(key: string): void {
    const [h1, h2] = hashes(key);
    // A key already answered "maybe" (an actor saving again) changes nothing: only new keys count
    // towards a slice's capacity, so memory follows the keys, not the writes.
    if (this.has(h1, h2)) return;
    let slice = this.slices[this.slices.length - 1]!;
    if (slice.count >= slice.capacity) slice = this.grow(slice.capacity * 2);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) >>> 0;
      const at = bit % slice.size;
      slice.bits[at >>> 5]! |= 1 << (at & 31);
    }
    slice.count++;
  }

  /** False only when the key was never added. */
  mayHave(key: string): boolean {
    const [h1, h2] = hashes(key);
    return this.has(h1, h2);
  }

  private has(h1: number, h2: number): boolean {
    for (const slice of this.slices) {
      let all = true;
      for (let i = 0; i < PROBES && all; i++) {
        const at = ((h1 + Math.imul(i, h2)) >>> 0) % slice.size;
        all = (slice.bits[at >>> 5]! & (1 << (at & 31))) !== 0;
      }
      if (all) return true;
    }
    return false;
  }

  private grow(capacity: number): Slice {
    const size = capacity * BITS_PER_KEY;
    const slice = { bits: new Uint32Array(Math.ceil(size / 32)), size, count: 0, capacity };
    this.slices.push(slice);
    return slice;
  }
}
