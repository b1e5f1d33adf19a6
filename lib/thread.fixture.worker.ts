// A thread for lib/thread.test.ts: echoes a job, fails one, never answers one, or stops the thread.
import { serveJobs } from './thread.ts';

serveJobs<{ echo?: string; fail?: string; hang?: true; stop?: true }, string>(async (job) => {
  if (job.fail) throw new Error(job.fail);
  if (job.stop) process.exit(3);
  if (job.hang) return new Promise<string>(() => {});
  return `echo ${job.echo}`;
});
