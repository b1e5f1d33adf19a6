// `npm run lint:openapi`: the OpenAPI document the server serves at /openapi.json (every route,
// the admin API included), linted by Redocly's CLI with the repository's redocly.yaml (the
// recommended rules, strict) and .redocly.lint-ignore.yaml. Redocly names a document in its
// ignore file by its path from the config, so the document is written to a temporary directory
// beside copies of the two. Exits with the linter's code.
import { spawnSync } from 'node:child_process';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../harness/app.harness.ts';
import { tempDir } from '../harness/gatepost.harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REDOCLY = fileURLToPath(import.meta.resolve('@redocly/cli/bin/cli.js'));

const app = await buildApp('openapi-lint', { deps: { adminToken: 'lint' } });
const served = await app.server.app.inject({ method: 'GET', url: '/openapi.json' });
await app.close();
if (served.statusCode !== 200) throw new Error(`GET /openapi.json answered ${served.statusCode}`);

const dir = tempDir('openapi-lint');
// Indented, so that each problem the linter reports points at a line of its own.
writeFileSync(join(dir, 'openapi.json'), JSON.stringify(served.json(), null, 2));
for (const file of ['redocly.yaml', '.redocly.lint-ignore.yaml']) copyFileSync(join(ROOT, file), join(dir, file));
const lint = spawnSync(process.execPath, [REDOCLY, 'lint', '--config', 'redocly.yaml', 'openapi.json'], {
  cwd: dir,
  stdio: 'inherit',
  env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
});
rmSync(dir, { recursive: true, force: true });
process.exit(lint.status ?? 1);
