import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LAUNCH_ENV, V8_FLAGS } from './launch.ts';

describe('launch', () => {
  const environment = Object.entries(LAUNCH_ENV).map(([name, value]) => `${name}=${value}`);

  it('npm start builds, then runs the compiled main.js with the environment and V8 flags the harness and the benchmarks use', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.scripts.prestart).toBe('npm run -s build');
    expect(pkg.scripts.start).toBe([...environment, 'node', ...V8_FLAGS, 'dist/main.js'].join(' '));
  });

  it('the image and the Helm chart run the build with the V8 flags npm start uses', () => {
    const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!);
    expect(cmd).toEqual(['node', ...V8_FLAGS, 'dist/main.js']);
    // The chart's command keeps the image's environment.
    const env = /^ENV ((?:.*\\\n)*.*)$/m.exec(dockerfile)![1]!.split(/\s*\\\n\s*/);
    expect(env).toEqual(expect.arrayContaining(environment));
    const values = readFileSync(new URL('../helm/gatepost/values.yaml', import.meta.url), 'utf8');
    expect(JSON.parse(/^command: (\[.*\])$/m.exec(values)![1]!)).toEqual(cmd);
  });
});
