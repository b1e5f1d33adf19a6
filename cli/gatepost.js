#!/usr/bin/env node
// The `gatepost` command. Runs the compiled CLI (`npm run build` puts it in dist/cli/) when there
// is one, and the TypeScript sources through tsx otherwise (a checkout with its dev dependencies).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
