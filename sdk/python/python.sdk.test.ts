// The Python SDK (sdk/python) against a real Gatepost: its pytest suite, run by Debian's
// /usr/bin/python3, and its operations table checked against the served /openapi.json.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gatepostForSdk, missingFromOpenApi, run, type SdkOperation } from '../../test/harness/sdk.harness.ts';

const PYTHON = '/usr/bin/python3';
const SDK = fileURLToPath(new URL('.', import.meta.url));
// No __pycache__ or .pytest_cache left in the tree.
const PY_ENV = { PYTHONPATH: join(SDK, 'src'), PYTHONDONTWRITEBYTECODE: '1' };
const suite = gatepostForSdk();

describe('the Python SDK', () => {
  it('passes its pytest suite against a running Gatepost', { timeout: 180_000 }, async () => {
    const { code, output } = await run(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      cwd: SDK,
      env: { ...PY_ENV, ...suite.env },
    });
    expect(code, output).toBe(0);
    expect(output).toMatch(/\d+ passed/);
  });

  it('claims only operations the OpenAPI document has, with the same method and path', async () => {
    const { code, stdout, output } = await run(PYTHON, ['-m', 'gatepost.operations'], { cwd: SDK, env: PY_ENV });
    expect(code, output).toBe(0);
    const operations = JSON.parse(stdout) as SdkOperation[];
    expect(operations.length).toBeGreaterThan(20);
    const openapi = (await suite.gp.request('GET', '/openapi.json')).body;
    expect(missingFromOpenApi(operations, openapi)).toEqual([]);
  });
});
