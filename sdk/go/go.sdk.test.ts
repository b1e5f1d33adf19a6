// The Go SDK's own tests (`go test`) against a real Gatepost with a relay, and its table of
// operations (`go run ./cmd/operations`) held to the served OpenAPI document.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gatepostForSdk, missingFromOpenApi, run, type SdkOperation } from '../../test/harness/sdk.harness.ts';

const DIR = fileURLToPath(new URL('.', import.meta.url));
const suite = gatepostForSdk();

describe('the Go SDK', () => {
  it('passes its go test suite against a running Gatepost', async () => {
    const result = await run('go', ['test', '-count=1', '-v', './...'], { cwd: DIR, env: suite.env });
    expect(result.code, result.output).toBe(0);
    // The integration tests ran: none was skipped for want of the environment.
    expect(result.output).toMatch(/--- PASS: TestALiveSendsWebhookAndReceiptVerify/);
  }, 180_000);

  it('claims only operations the OpenAPI document has, with the same method and path', async () => {
    const result = await run('go', ['run', './cmd/operations'], { cwd: DIR });
    expect(result.code, result.output).toBe(0);
    const operations = JSON.parse(result.stdout) as SdkOperation[];
    expect(operations.length).toBeGreaterThan(20);
    const openapi = await suite.gp.request('GET', '/openapi.json');
    expect(missingFromOpenApi(operations, openapi.body)).toEqual([]);
  }, 120_000);
});
