// A job thread answers each job by its id, refuses what it held when it stops, and starts anew.
import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { jobThread, type JobThread } from './thread.ts';
import { threadId } from './worker.ts';

type Job = { echo?: string; fail?: string; hang?: true; stop?: true; priority?: true };
let thread: JobThread<Job, string> | undefined;
afterEach(async () => {
  await thread?.close();
});

describe('jobThread', () => {
  it('answers concurrent jobs each with its own answer, and a failing job with its reason', async () => {
    thread = jobThread<Job, string>(import.meta.url, 'thread.fixture.worker');
    const answers = await Promise.allSettled([
      thread.run({ echo: 'a' }),
      thread.run({ fail: 'no such thing' }),
      thread.run({ echo: 'b' }),
    ]);
    expect(answers[0]).toEqual({ status: 'fulfilled', value: 'echo a' });
    expect(answers[1]).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('no such thing') } });
    expect(answers[2]).toEqual({ status: 'fulfilled', value: 'echo b' });
  });

  it('refuses the jobs of a thread that stopped, and runs the next job on a new one', async () => {
    thread = jobThread<Job, string>(import.meta.url, 'thread.fixture.worker');
    await expect(thread.run({ stop: true })).rejects.toThrow('the thread.fixture.worker thread stopped');
    expect(await thread.run({ echo: 'again' })).toBe('echo again');
  });

  it.runIf(process.platform === 'linux')('runs below the event loop\'s priority, which keeps its own', async () => {
    const own = () => getPriority(threadId());
    const before = own();
    thread = jobThread<Job, string>(import.meta.url, 'thread.fixture.worker');
    expect(await thread.run({ priority: true })).toBe(`niceness ${Math.max(before, 10)}`);
    expect(own()).toBe(before);
  });

  it('refuses what is out when closed', async () => {
    thread = jobThread<Job, string>(import.meta.url, 'thread.fixture.worker');
    const out = thread.run({ hang: true });
    await thread.close();
    await expect(out).rejects.toThrow('was closed');
  });
});
