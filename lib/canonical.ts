// JSON with object keys sorted, so equal values always give equal strings (request hashes).

/**
 * Deeper values are refused (a RangeError), not walked: sorting and JSON.stringify recurse, and
 * `data` nested 10,000 deep overflowed the stack (issue 20, item 9). The gate refuses deep `data`
 * sooner, as a coded 400 (MAX_DATA_DEPTH); this guards every other caller.
 */
export const MAX_CANONICAL_DEPTH = 64;

export function canonicalJson(value: unknown): string {
  // A sorted copy, then JSON.stringify without a replacer: a replacer function is called for
  // every value and keeps the serialiser on its slow path.
  return JSON.stringify(sortedCopy(value, 0));
}

function sortedCopy(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_CANONICAL_DEPTH) {
    throw new RangeError(`The value nests objects or arrays more than ${MAX_CANONICAL_DEPTH} deep.`);
  }
  if (Array.isArray(value)) return value.map((v) => sortedCopy(v, depth + 1));
  // JSON.stringify writes what toJSON answers (a Date's string): nothing to sort.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  const source = value as Record<string, unknown>;
  // No prototype, so a "__proto__" key (JSON.parse makes it an own property) stays a key.
  const sorted: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(source).sort()) sorted[key] = sortedCopy(source[key], depth + 1);
  return sorted;
}

/** Whether `value` nests objects or arrays more than `max` deep. Walks without recursion: any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
