// The Ruby SDK (sdk/ruby) against a real Gatepost: its minitest suite, run by Debian's
// /usr/bin/ruby, and its operations table checked against the served /openapi.json.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gatepostForSdk, missingFromOpenApi, run, type SdkOperation } from '../../test/harness/sdk.harness.ts';

const RUBY = '/usr/bin/ruby';
const SDK = fileURLToPath(new URL('.', import.meta.url));
const suite = gatepostForSdk();

describe('the Ruby SDK', () => {
  it('passes its minitest suite against a running Gatepost', { timeout: 180_000 }, async () => {
    const script = 'Dir.glob("test/*_test.rb").sort.each { |f| require File.expand_path(f) }';
    const { code, output } = await run(RUBY, ['-Ilib', '-Itest', '-e', script], { cwd: SDK, env: suite.env });
    expect(code, output).toBe(0);
    expect(output).toMatch(/\d+ runs, \d+ assertions, 0 failures, 0 errors/);
  });

  it('claims only operations the OpenAPI document has, with the same method and path', async () => {
    const { code, stdout, output } = await run(
      RUBY,
      ['-Ilib', '-rgatepost/operations', '-e', 'puts Gatepost::Operations.to_json'],
      {
        cwd: SDK,
      },
    );
    expect(code, output).toBe(0);
    const operations = JSON.parse(stdout) as SdkOperation[];
    expect(operations.length).toBeGreaterThan(20);
    const openapi = (await suite.gp.request('GET', '/openapi.json')).body;
    expect(missingFromOpenApi(operations, openapi)).toEqual([]);
  });
});
