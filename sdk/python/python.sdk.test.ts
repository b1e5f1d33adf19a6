// The Python SDK (sdk/python) against a real Gatepost: its pytest suite, run by Debian's
// /usr/bin/python3, and its operations table checked against the served /openapi.json.
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

const PYTHON = '/usr/bin/python3';
const SDK = join(ROOT, 'sdk/python');
// No __pycache__ or .pytest_cache left in the tree.
const PY_ENV = { PYTHONPATH: join(SDK, 'src'), PYTHONDONTWRITEBYTECODE: '1' };

let target: SdkTarget;
beforeAll(async () => {
  target = await startSdkTarget();
});
afterAll(async () => {
  await target?.close();
});

describe('the Python SDK', () => {
  it('passes its pytest suite against a running Gatepost', { timeout: 180_000 }, async () => {
    const { code, output } = await run(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      cwd: SDK,
      env: { ...PY_ENV, ...target.env },
    });
    expect(code, output).toBe(0);
    expect(output).toMatch(/\d+ passed/);
  });

  it('claims only operations the OpenAPI document has, with the same method and path', async () => {
    const { code, output } = await run(PYTHON, ['-m', 'gatepost.operations'], { cwd: SDK, env: PY_ENV });
    expect(code, output).toBe(0);
    const table = JSON.parse(output) as Operation[];
    expect(table.length).toBeGreaterThan(20);
    const doc = (await target.gp.request('GET', '/openapi.json')).body;
    expect(missingFromOpenApi(table, doc)).toEqual([]);
  });
});
