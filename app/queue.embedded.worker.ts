// The thread of the queue's reads for GET /metrics (queue.embedded.ts), on a read-only connection of its own.
import { workerData } from 'node:worker_threads';
import { serveJobs } from '../lib/thread.ts';
import { queueReader, type QueueRead } from './queue.embedded.ts';

const reader = queueReader((workerData as { file: string }).file);

serveJobs<QueueRead, unknown>(async (job) => (job.of === 'queue' ? reader.queue() : reader.breakers()));
