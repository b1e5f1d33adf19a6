// The PHP SDK's own tests (PHPUnit, Debian's) against a real Gatepost with a relay, and its table
// of operations (`php bin/operations.php`) held to the served OpenAPI document.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gatepostForSdk, missingFromOpenApi, run, type SdkOperation } from '../../test/harness/sdk.harness.ts';

const DIR = fileURLToPath(new URL('.', import.meta.url));
const suite = gatepostForSdk();

describe('the PHP SDK', () => {
  it('passes its PHPUnit suite against a running Gatepost', async () => {
    const result = await run('phpunit', ['--log-junit', '/dev/stdout'], { cwd: DIR, env: suite.env });
    expect(result.code, result.output).toBe(0);
    // The integration tests ran and passed, none skipped for want of the environment.
    expect(result.stdout).toMatch(/<testcase name="testALiveSendsWebhookAndReceiptVerify"[^>]*\/>/);
    expect(result.stdout).not.toMatch(/<skipped/);
  }, 180_000);

  it('claims only operations the OpenAPI document has, with the same method and path', async () => {
    const result = await run('php', ['bin/operations.php'], { cwd: DIR });
    expect(result.code, result.output).toBe(0);
    const operations = JSON.parse(result.stdout) as SdkOperation[];
    expect(operations.length).toBeGreaterThan(20);
    const openapi = await suite.gp.request('GET', '/openapi.json');
    expect(missingFromOpenApi(operations, openapi.body)).toEqual([]);
  });
});
