// The catalog contract against SQLite: a fresh file in a temporary directory, removed afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { catalogContract } from '../catalog.contract.ts';
import { sealedSecretsContract } from '../catalog.sealed.contract.ts';
import { SqliteCatalog } from './catalog.sqlite.ts';

catalogContract('SQLite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  return {
    catalog,
    cleanup: async () => {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

// The embedded runtime drops lifecycle events nobody is to receive on this answer (app/gatepost.ts).
it('answers hasWebhooksFor at once, for the event types an enabled endpoint takes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  try {
    const quota = { per_second: null, per_day: null };
    const t = await catalog.createTenant({ id: 'ten_a', name: 'A', default_from: null, quota });
    expect(catalog.hasWebhooksFor(t.id, 'email.sent')).toBe(false);
    const w = await catalog.createWebhook({
      id: 'whk_a',
      tenant_id: t.id,
      url: 'https://hooks.example.com/a',
      events: ['email.sent'],
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    });
    expect(catalog.hasWebhooksFor(t.id, 'email.sent')).toBe(true);
    expect(catalog.hasWebhooksFor(t.id, 'email.bounced')).toBe(false);
    expect(catalog.hasWebhooksFor('ten_other', 'email.sent')).toBe(false);
    await catalog.disableWebhook(t.id, w.id, 'failing');
    expect(catalog.hasWebhooksFor(t.id, 'email.sent')).toBe(false);
  } finally {
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  }
});

sealedSecretsContract('SQLite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-catalog-'));
  const file = join(dir, 'catalog.db');
  return {
    open: async (sealer) => new SqliteCatalog(file, sealer),
    rawSecrets: async () => {
      const db = new Database(file, { readonly: true });
      try {
        return (
          db.prepare('SELECT secret, previous_secret FROM webhooks').all() as { secret: string; previous_secret: string | null }[]
        )
          .flatMap((r) => [r.secret, r.previous_secret])
          .filter((v) => v !== null);
      } finally {
        db.close();
      }
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
