import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the worker thread `name` from the folder of `caller` (the caller's `import.meta.url`).
 * Compiled (`node dist/main.js`), the caller is .js and so is its worker. From the TypeScript
 * sources (vitest, `--import tsx`), a thread inherits no loader on Node 20: it registers tsx
 * first, then loads the .ts.
 */
export function startWorker(caller: string, name: string, options?: WorkerOptions): Worker {
  if (caller.endsWith('.js')) return new Worker(new URL(`./${name}.js`, caller), options);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const source = JSON.stringify(new URL(`./${name}.ts`, caller).href);
  const boot = `import { register } from ${tsx}; register(); await import(${source});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`), options);
}
