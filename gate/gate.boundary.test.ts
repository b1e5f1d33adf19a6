// "The gate is the only way a message comes into existence": no module but the gate calls
// MessageActor.admit, so every ingress, present and future, must go through createGate().admit.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (['node_modules', 'data', '.git', 'test', 'bench'].includes(name)) return [];
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.includes('testkit') ? [path] : [];
  });
}

describe('the admission gate', () => {
  it('is the only caller of MessageActor.admit', () => {
    const callers = sources(ROOT)
      .filter((file) => {
        const text = readFileSync(file, 'utf8');
        // A typed client (`actor(…, messageActor, …).admit(`) or a raw invoke of the method.
        return /messageActor,[^)]*\)\s*\.admit\(/.test(text) || /MESSAGE_ACTOR[^;]*['"]admit['"]/.test(text);
      })
      .map((file) => relative(ROOT, file));
    expect(callers).toEqual(['gate/gate.ts']);
  });

  it('is what the ingresses call', () => {
    const ingress = sources(join(ROOT, 'ingress')).map((f) => readFileSync(f, 'utf8'));
    expect(ingress.some((text) => text.includes('gate.admit('))).toBe(true);
  });
});
