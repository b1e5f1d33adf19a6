// The usual setup of a Dapr-only test file: one SMTP relay, a Dapr topology delivering to it (on a
// fresh PostgreSQL database and Redis db), and a client of its ingress; started before the
// file's tests and stopped after them.
import { afterAll, beforeAll } from 'vitest';
import { DaprCluster } from '../../dapr/cluster/cluster.ts';
import {
  ADMIN_TOKEN,
  GatepostClient,
  dropDatabase,
  freshDatabase,
  freshRedisDb,
  releaseRedisDb,
  type HttpAnswer,
} from './gatepost.harness.ts';
import { startRelay, type Relay } from './relay.harness.ts';

export interface ClusterSuite {
  cluster: DaprCluster;
  relay: Relay;
  client: GatepostClient;
}

export function daprClusterWithRelay(name: string, opts: { actorHosts?: number } = {}): ClusterSuite {
  const suite = { client: new GatepostClient() } as ClusterSuite;
  let databaseUrl: string | undefined;
  let redisDb: number | undefined;
  beforeAll(async () => {
    suite.relay = await startRelay();
    databaseUrl = await freshDatabase();
    redisDb = await freshRedisDb();
    suite.cluster = await DaprCluster.start({
      databaseUrl,
      redisDb,
      ...opts,
      env: {
        GATEPOST_ADMIN_TOKEN: ADMIN_TOKEN,
        GATEPOST_SMTP_RELAY: suite.relay.url,
        GATEPOST_DELIVERY_RETRY: '1s,1s,1s',
        // Any free port: SMTP submission's default (2587) is one per machine, and topologies run side by side.
        GATEPOST_SMTP_PORT: '0',
        GATEPOST_INBOUND_PORT: '0',
      },
    });
    suite.client.url = suite.cluster.url;
    console.log(`${name} cluster logs: ${suite.cluster.workDir}`);
  }, 180_000);
  afterAll(async () => {
    await suite.cluster?.stop();
    await suite.relay?.close();
    if (redisDb !== undefined) releaseRedisDb(redisDb);
    if (databaseUrl) await dropDatabase(databaseUrl);
  });
  return suite;
}

/**
 * POST /v1/emails of the message named `key` (to `<key>@example.com`, `key` as its subject and
 * idempotency key): a client that gets no 202 sends it again with the same key.
 */
export function sendKeyed(client: GatepostClient, apiKey: string, key: string): Promise<HttpAnswer> {
  return client.request('POST', '/v1/emails', {
    key: apiKey,
    body: { to: `${key}@example.com`, subject: key, html: `<p>${key}</p>`, idempotency_key: key },
  });
}

/** The relay's Message-ID of each acknowledged message, with the message's id. */
export const relayMessageIds = (acknowledged: Map<string, string>): Map<string, string> =>
  new Map([...acknowledged.values()].map((id) => [`<${id}@sender.example>`, id]));
