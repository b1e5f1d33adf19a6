// npm run bench:import [-- --rows 100000]
// A contacts CSV of `rows` generated rows streamed into a new audience over HTTP, as it is made:
// the import's rows per second, and Gatepost's resident memory before and at its peak (VmHWM),
// which shows the file is never held whole. Embedded runtime.
import { parseArgs } from 'node:util';
import { call, fmt, gatepostRevision, importGeneratedContacts, rssMiB, startGatepost } from './common.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' } } });
const rows = Number(values.rows);

const gp = await startGatepost();
try {
  const issued = await call(gp.url, 'POST', `/v1/admin/tenants/${gp.tenantId}/keys`, gp.adminToken, { kind: 'live' });
  const key = issued.body.key as string;
  const audience = (await call(gp.url, 'POST', '/v1/audiences', key, { name: 'bench' })).body.id as string;
  const before = rssMiB(gp.pid);

  const started = performance.now();
  const { status, report } = await importGeneratedContacts(gp.url, key, audience, rows);
  const seconds = (performance.now() - started) / 1000;
  if (status !== 200 || report.added !== rows) throw new Error(`import answered ${status} ${JSON.stringify(report)}`);

  console.log(
    `bench:import (Gatepost ${gatepostRevision()}): ${fmt(rows)} rows in ${seconds.toFixed(1)} s, ${fmt(rows / seconds)} rows/s`,
  );
  console.log(`Gatepost resident memory: ${fmt(before)} MiB before, ${fmt(rssMiB(gp.pid, 'VmHWM'))} MiB at its peak`);
} finally {
  await gp.stop();
}
