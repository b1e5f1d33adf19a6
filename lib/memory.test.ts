// The process gives back what a burst grew once it goes quiet, and never collects while busy.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { releaseMemoryWhenQuiet } from './memory.ts';

/** Keeps the event loop busy for `ms`, as a burst of work does. */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('releaseMemoryWhenQuiet', () => {
  it('collects at the first quiet tick after starting and after work, not while the work goes on, and when told of garbage', async () => {
    const collected: string[] = [];
    let phase = 'start';
    const release = releaseMemoryWhenQuiet({ tickMs: 50, quietBelow: 0.3, spacingMs: 0, collect: () => collected.push(phase) });
    try {
      await expect.poll(() => collected, { interval: 10, timeout: 5000 }).toEqual(['start']);
      phase = 'busy';
      // Work in slices that let the timers run: every tick is busy, none collects.
      const until = performance.now() + 600;
      while (performance.now() < until) {
        work(10);
        await new Promise((resolve) => setImmediate(resolve));
      }
      phase = 'quiet after work';
      await expect.poll(() => collected, { interval: 10, timeout: 5000 }).toEqual(['start', 'quiet after work']);
      phase = 'garbage left';
      release.garbageLeft();
      await expect.poll(() => collected, { interval: 10, timeout: 5000 }).toEqual(['start', 'quiet after work', 'garbage left']);
    } finally {
      release.stop();
    }
  });

  it('waits the spacing between two collections', async () => {
    const collected: number[] = [];
    const release = releaseMemoryWhenQuiet({ tickMs: 20, quietBelow: 0.3, spacingMs: 400, collect: () => collected.push(performance.now()) });
    try {
      await expect.poll(() => collected.length, { interval: 10, timeout: 5000 }).toBe(1);
      release.garbageLeft();
      await expect.poll(() => collected.length, { interval: 10, timeout: 2000 }).toBe(2);
      expect(collected[1]! - collected[0]!).toBeGreaterThanOrEqual(400);
    } finally {
      release.stop();
    }
  });

  it('does nothing without a collector (node without --expose-gc)', () => {
    const release = releaseMemoryWhenQuiet({ collect: undefined });
    release.garbageLeft();
    release.stop();
  });

  it('in a process started with --expose-gc, gives back the heap a burst of garbage grew', async () => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'memory.fixture.ts'], {
      cwd: new URL('.', import.meta.url),
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    try {
      const sizes: number[] = [];
      for await (const line of createInterface({ input: child.stdout! })) {
        sizes.push(Number(/^heap (\d+)$/.exec(line)![1]));
        // Positive signal: the heap is back under half of what the garbage grew it to (the first line).
        if (sizes.at(-1)! < sizes[0]! / 2) break;
      }
      expect(sizes[0]).toBeGreaterThan(100 * 2 ** 20);
      expect(sizes.at(-1)).toBeLessThan(sizes[0]! / 2);
    } finally {
      child.send('stop');
      child.kill();
    }
  }, 30_000);
});
