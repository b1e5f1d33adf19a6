// A background job on a timer (a catalog write or sweep every few seconds): run at once and then
// every `ms`, one run at a time, so a slow store skips ticks rather than piling runs up. The
// timer keeps no process alive; `stop` ends the ticks and waits for a run under way.
export interface Ticking {
  stop(): Promise<void>;
}

export function every(ms: number, job: () => Promise<unknown>, onError: (error: unknown) => void): Ticking {
  let running: Promise<void> | null = null;
  const tick = () => {
    // Through a promise: a job that throws at once is a failed run too.
    running ??= Promise.resolve()
      .then(job)
      .then(() => undefined, onError)
      .finally(() => (running = null));
  };
  tick();
  const timer = setInterval(tick, ms);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
