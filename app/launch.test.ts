import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { V8_FLAGS } from './launch.ts';

describe('launch', () => {
  it('npm start builds, then runs the compiled main.js with the V8 flags the harness and the benchmarks use', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.scripts.prestart).toBe('npm run -s build');
    expect(pkg.scripts.start).toBe(['node', ...V8_FLAGS, 'dist/main.js'].join(' '));
  });
});
