// The usual setup of an end-to-end file: one SMTP relay, one Gatepost delivering to it, one
// tenant with its keys; started before the file's tests and stopped after them.
import { afterAll, beforeAll } from 'vitest';
import { startGatepost, type GatepostProcess } from './gatepost.harness.ts';
import { startRelay, type Relay } from './relay.harness.ts';

export interface Suite {
  gp: GatepostProcess;
  relay: Relay;
  tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;
}

export function gatepostWithRelay(): Suite {
  const suite = {} as Suite;
  beforeAll(async () => {
    suite.relay = await startRelay();
    suite.gp = await startGatepost({ relayUrl: suite.relay.url });
    suite.tenant = await suite.gp.tenant();
  });
  afterAll(async () => {
    await suite.gp?.dispose();
    await suite.relay?.close();
  });
  return suite;
}
