// Builds the package: one ESM file for browsers (dist/gatepost.js, the Node SDK's transport and
// errors bundled in, minified, with a source map) and its declarations (dist/browser/index.d.ts).
// `node build.mjs [outDir]`; esbuild and typescript come from the repository's dev dependencies.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, 'dist'));

await build({
  entryPoints: [join(here, 'index.ts')],
  outfile: join(out, 'gatepost.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  legalComments: 'none',
});
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json'), '--outDir', out], { stdio: 'inherit' });
