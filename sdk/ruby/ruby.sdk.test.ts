// The Ruby SDK (sdk/ruby) against a real Gatepost: its minitest suite, run by Debian's
// /usr/bin/ruby, and its operations table checked against the served /openapi.json.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  missingFromOpenApi,
  ROOT,
  run,
  startSdkTarget,
  type Operation,
  type SdkTarget,
} from '../../test/harness/sdk-runner.harness.ts';

const RUBY = '/usr/bin/ruby';
const SDK = join(ROOT, 'sdk/ruby');

let target: SdkTarget;
beforeAll(async () => {
  target = await startSdkTarget();
});
afterAll(async () => {
  await target?.close();
});

describe('the Ruby SDK', () => {
  it('passes its minitest suite against a running Gatepost', { timeout: 180_000 }, async () => {
    const script = 'Dir.glob("test/*_test.rb").sort.each { |f| require File.expand_path(f) }';
    const { code, output } = await run(RUBY, ['-Ilib', '-Itest', '-e', script], { cwd: SDK, env: target.env });
    expect(code, output).toBe(0);
    expect(output).toMatch(/\d+ runs, \d+ assertions, 0 failures, 0 errors/);
  });

  it('claims only operations the OpenAPI document has, with the same method and path', async () => {
    const { code, output } = await run(RUBY, ['-Ilib', '-rgatepost/operations', '-e', 'puts Gatepost::Operations.to_json'], {
      cwd: SDK,
    });
    expect(code, output).toBe(0);
    const table = JSON.parse(output) as Operation[];
    expect(table.length).toBeGreaterThan(20);
    const doc = (await target.gp.request('GET', '/openapi.json')).body;
    expect(missingFromOpenApi(table, doc)).toEqual([]);
  });
});
