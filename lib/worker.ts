import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The module `name` (no extension) in the folder of `caller` (the caller's `import.meta.url`):
 * compiled (`node dist/main.js`), the caller is .js and so is the module; from the TypeScript
 * sources (vitest, `--import tsx`), both are .ts.
 */
export function moduleBeside(caller: string, name: string): URL {
  return new URL(`./${name}.${caller.endsWith('.js') ? 'js' : 'ts'}`, caller);
}

/**
 * Starts the worker thread `name` from the folder of `caller`. From the sources, a thread
 * inherits no loader on Node 20: it registers tsx first, then loads the .ts.
 */
export function startWorker(caller: string, name: string, options?: WorkerOptions): Worker {
  const file = moduleBeside(caller, name);
  if (file.pathname.endsWith('.js')) return new Worker(file, options);
  const boot = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); await import(${JSON.stringify(file.href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`), options);
}
