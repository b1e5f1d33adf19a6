// JSON with object keys sorted, so equal values always give equal strings (request hashes).
export function canonicalJson(value: unknown): string {
  // A sorted copy, then JSON.stringify without a replacer: a replacer function is called for
  // every value and keeps the serialiser on its slow path.
  return JSON.stringify(sortedCopy(value));
}

function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(sortedCopy);
  // JSON.stringify writes what toJSON answers (a Date's string): nothing to sort.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  const source = value as Record<string, unknown>;
  // No prototype, so a "__proto__" key (JSON.parse makes it an own property) stays a key.
  const sorted: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(source).sort()) sorted[key] = sortedCopy(source[key]);
  return sorted;
}
