// Baseline B, the stack a team would otherwise build: Express 5, zod validation of the send body,
// and a BullMQ job on Redis; 202 once `queue.add` has resolved. The queue is named by the bench
// (BENCH_QUEUE), which also removes it afterwards.
import express from 'express';
import { Queue } from 'bullmq';
import { z } from 'zod';
import type { AddressInfo } from 'node:net';

const SendRequest = z
  .object({
    from: z.string().min(3).max(998).optional(),
    to: z.string().min(3).max(998),
    subject: z.string().min(1).max(998),
    html: z.string().min(1),
    text: z.string().optional(),
    data: z.record(z.string(), z.unknown()).optional(),
    send_at: z.iso.datetime({ offset: true }).optional(),
    tags: z.array(z.string().max(64)).max(10).optional(),
  })
  .strict();

const queue = new Queue(process.env.BENCH_QUEUE ?? 'bench-send', {
  connection: { host: process.env.REDIS_HOST ?? '127.0.0.1', port: Number(process.env.REDIS_PORT ?? 6379) },
});

const app = express();
app.use(express.json({ limit: '1mb' }));
app.post('/v1/emails', async (req, res) => {
  const parsed = SendRequest.safeParse(req.body);
  if (!parsed.success) {
    res.status(400).json({ error: { code: 'invalid_request', details: parsed.error.issues } });
    return;
  }
  const job = await queue.add('send', parsed.data);
  res.status(202).json({ id: job.id, status: 'queued' });
});

const server = app.listen(0, '127.0.0.1', () => {
  console.log(`Express+BullMQ baseline listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => {
  server.close();
  void queue.close().finally(() => process.exit(0));
});
