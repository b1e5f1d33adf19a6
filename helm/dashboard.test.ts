// The Grafana dashboard (helm/gatepost/dashboards/gatepost.json) graphs only metrics Gatepost
// exposes: every series its queries name is in a scrape of ops/metrics.prom.ts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { promMetrics } from '../ops/metrics.prom.ts';

const dashboard = JSON.parse(readFileSync(new URL('./gatepost/dashboards/gatepost.json', import.meta.url), 'utf8'));

describe('the Grafana dashboard', () => {
  it('queries only series a scrape has', async () => {
    const metrics = promMetrics({
      queue: async () => [{ tenant_id: 'ten_1', scheduled: 1, ready: 0, deferred: 0, oldest_age_seconds: 0 }],
      fairQueue: () => [{ destination: 'example.com', waiting: 1, in_flight: 1 }],
      breakers: () => [{ tenant_id: 'ten_1', status: 'open' }],
    });
    // Every labelled series appears once it has counted something.
    metrics.send('api', 'accepted');
    metrics.refusal('recipient_suppressed');
    metrics.delivery('sent', 0.1);
    metrics.webhook('delivered', 0.1);
    const { text } = await metrics.scrape();
    const exposed = new Set(text.split('\n').flatMap((l) => (/^\w+/.exec(l) ?? []) as string[]));

    const queried = new Set<string>();
    for (const panel of dashboard.panels)
      for (const target of panel.targets ?? [])
        for (const m of (target.expr as string).matchAll(/\b(gatepost|process|nodejs)_\w+/g)) queried.add(m[0]);
    expect(queried.size).toBeGreaterThan(8);
    for (const name of queried) expect(exposed, name).toContain(name);
  });
});
