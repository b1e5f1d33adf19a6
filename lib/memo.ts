// A bounded memo for values that are costly to compute and cheap to keep. It holds two
// generations: when the current one is full it becomes the previous one and the older is dropped
// whole. Evicting one entry at a time from a Map (`delete(keys().next().value)`) looks O(1) but is
// not: V8 leaves a hole for each deleted entry, and `keys().next()` walks over all of them, which
// cost some 5 us a call at 10,000 entries.
export class Memo<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  /** Holds at least `capacity` of the most recently added entries, and at most twice as many. */
  constructor(private readonly capacity: number) {}

  get(key: K, compute: (key: K) => V): V {
    // One lookup on a hit: `has` is asked only to tell a stored undefined from a miss.
    const hit = this.current.get(key);
    if (hit !== undefined || this.current.has(key)) return hit!;
    const old = this.previous.get(key);
    const value = old !== undefined || this.previous.has(key) ? old! : compute(key);
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
    return value;
  }
}
