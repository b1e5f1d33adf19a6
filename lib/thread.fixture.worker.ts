// A thread for lib/thread.test.ts: echoes a job, fails one, never answers one, stops the thread, or
// tells its scheduling priority.
import { getPriority } from 'node:os';
import { serveJobs } from './thread.ts';
import { threadId } from './worker.ts';

serveJobs<{ echo?: string; fail?: string; hang?: true; stop?: true; priority?: true }, string>(async (job) => {
  if (job.priority) return `niceness ${getPriority(threadId())}`;
  if (job.fail) throw new Error(job.fail);
  if (job.stop) process.exit(3);
  if (job.hang) return new Promise<string>(() => {});
  return `echo ${job.echo}`;
});
