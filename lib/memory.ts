import { performance } from 'node:perf_hooks';

/**
 * Gives memory back once the process goes quiet. V8 grows its heap under load and, while nothing
 * allocates, never collects it again: after a burst of 90,000 sends Gatepost stayed at 613 MiB
 * resident through a minute of idle with ~90 MiB of it alive; one full collection brought it to
 * 364 MiB (bench/RESULTS.md, twenty-second pass). So: a full collection at the first quiet tick
 * after work (or after `garbageLeft`), and never while the event loop is busy.
 *
 * The collection needs `node --expose-gc` (app/launch.ts V8_FLAGS); without it this does nothing.
 */
export interface MemoryRelease {
  /** Much has just become garbage (say, thousands of idle actors dropped): collect at the next quiet tick. */
  garbageLeft(): void;
  stop(): void;
}

export interface MemoryReleaseOptions {
  /** How often the event loop's use is looked at (ms). */
  tickMs?: number;
  /** A tick with the event loop busy less than this share of it is quiet. */
  quietBelow?: number;
  /**
   * At least this long between two collections (ms): a load that comes and goes is not collected
   * after each wave. 10 s, not 30: after a burst the first collection comes at the first quiet
   * tick, and the second once the burst's actors are dropped (30 s idle, `garbageLeft`); at 30 s
   * apart the second came 35 s into the quiet minute, too late for V8's memory reducer to give the
   * young generation back within it (bench:send --idle 60: 402-416 MiB after the minute at 30 s,
   * 255-265 MiB at 10 s; bench/RESULTS.md, twenty-eighth pass).
   */
  spacingMs?: number;
  /** The collector; V8's (`gc()`, a full collection) unless given (a test's spy). */
  collect?: (() => void) | undefined;
}

export function releaseMemoryWhenQuiet({
  tickMs = 5000,
  quietBelow = 0.02,
  spacingMs = 10_000,
  collect = globalThis.gc,
}: MemoryReleaseOptions = {}): MemoryRelease {
  if (!collect) return { garbageLeft() {}, stop() {} };
  // Starting leaves garbage too: the modules' loading, the stores' migrations.
  let pending = true;
  let last = performance.eventLoopUtilization();
  let collectedAt = -Infinity;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (busy >= quietBelow) pending = true;
    else if (pending && performance.now() - collectedAt >= spacingMs) {
      pending = false;
      collect();
      collectedAt = performance.now();
      // The collection's own time is not work that leaves garbage.
      last = performance.eventLoopUtilization();
    }
  }, tickMs);
  timer.unref();
  return {
    garbageLeft: () => void (pending = true),
    stop: () => clearInterval(timer),
  };
}
