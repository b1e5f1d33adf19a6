#!/usr/bin/env node
// The `gatepost` command. In a checkout with its dev dependencies it runs the TypeScript sources
// through tsx, so it is never an older build than the code; where tsx is not installed (npm ci
// --omit=dev, the image) it runs what `npm run build` compiled to dist/cli/.
let tsx = null;
try {
  tsx = import.meta.resolve('tsx/esm/api');
} catch {
  // not installed: the build
}
if (tsx) {
  (await import(tsx)).register();
  await import('./main.ts');
} else {
  await import('../dist/cli/main.js');
}
