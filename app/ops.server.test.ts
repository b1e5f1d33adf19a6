// An actor host's own GET /metrics server (GATEPOST_ROLE=actors on Dapr), through Fastify's inject.
import { describe, expect, it } from 'vitest';
import { promMetrics } from '../ops/metrics.prom.ts';
import { opsServer } from './ops.server.ts';

const failures: unknown[] = [];
const report = (_message: string, error?: unknown) => failures.push(error);

describe('opsServer', () => {
  it('serves the counters of its process, and nothing else', async () => {
    const metrics = promMetrics({ queue: null });
    metrics.delivery('deferred', 2);
    const app = opsServer({ scrape: () => metrics.scrape(), token: null }, report);
    const scraped = await app.inject({ method: 'GET', url: '/metrics' });
    expect(scraped.statusCode).toBe(200);
    expect(scraped.body).toContain('gatepost_delivery_attempt_duration_seconds_count{outcome="deferred"} 1');
    // Dapr's state store cannot tell the queue cheaply: its metrics are left out.
    expect(scraped.body).not.toContain('gatepost_queue_messages');
    const other = await app.inject({ method: 'GET', url: '/v1/emails' });
    expect(other.statusCode).toBe(404);
    expect(other.json().error.code).toBe('not_found');
    expect(failures).toEqual([]);
    await app.close();
  });

  it('asks for the token when there is one', async () => {
    const app = opsServer({ scrape: () => promMetrics({ queue: null }).scrape(), token: 'a-metrics-token' }, report);
    expect((await app.inject({ method: 'GET', url: '/metrics' })).json().error.code).toBe('missing_api_key');
    const wrong = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.code).toBe('invalid_api_key');
    const right = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer a-metrics-token' } });
    expect(right.statusCode).toBe(200);
    expect(right.body).toContain('process_cpu_user_seconds_total');
    await app.close();
  });
});
