// The render thread: renders one Handlebars field per message, answered by id. A render that goes
// over a budget answers which limit; the deadline and the heap limit are watched from outside
// (render.thread.ts), since a thread cannot interrupt its own synchronous work.
import { parentPort } from 'node:worker_threads';
import { renderHandlebars } from './render.handlebars.ts';
import { LimitReached } from './render.limits.ts';
import type { RenderAnswer, RenderJob } from './render.thread.ts';

parentPort!.on('message', ({ id, source, data, kind, limits }: RenderJob) => {
  let answer: RenderAnswer;
  try {
    answer = { id, ok: renderHandlebars(source, data, kind, limits) };
  } catch (error) {
    if (error instanceof LimitReached) answer = { id, limit: error.limit };
    // A string too long for V8 is output over any limit.
    else if (error instanceof RangeError && /string length/i.test(error.message)) answer = { id, limit: 'output_size' };
    else answer = { id, failed: (error as Error).message };
  }
  parentPort!.postMessage(answer);
});
parentPort!.postMessage('ready');
