import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_ARGS } from './launch.ts';

describe('launch', () => {
  it('npm start runs main.ts with the arguments the harness and the benchmarks use', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.scripts.start).toBe(['node', ...NODE_ARGS, 'main.ts'].join(' '));
  });
});
