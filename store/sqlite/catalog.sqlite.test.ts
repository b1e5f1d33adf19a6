// The catalog contract against SQLite: a fresh file in a temporary directory, removed afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogContract } from '../catalog.contract.ts';
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
