// Starts Gatepost from the environment (see config/config.ts and the README) and drains on
// SIGTERM or SIGINT.
import { loadConfig } from './config/config.ts';
import { startGatepost } from './app/gatepost.ts';

const config = loadConfig();
const gatepost = await startGatepost(config);

if (gatepost.firstStartKeys) {
  const k = gatepost.firstStartKeys;
  console.log(`First start: created the default tenant ${k.tenant_id}.`);
  console.log(`  live key:    ${k.live}`);
  console.log(`  sandbox key: ${k.sandbox}`);
  console.log('  These keys are shown once. Try:');
  console.log(
    `  curl -X POST ${gatepost.url}/v1/emails -H "Authorization: Bearer ${k.sandbox}" -H "Content-Type: application/json" \\\n` +
      `    -d '{"to": "you@example.com", "subject": "Hello", "html": "<p>Hello {{name}}</p>", "data": {"name": "you"}}'`,
  );
}

if (!config.smtpRelay)
  console.log(
    `No GATEPOST_SMTP_RELAY set: live messages go straight to each recipient domain's MX hosts (port ${config.mxPort}).`,
  );
if (gatepost.smtp) {
  const { host, port, selfSignedCert } = gatepost.smtp;
  console.log(`SMTP submission listening on ${host}:${port} (STARTTLS, AUTH PLAIN or LOGIN with an API key as the password)`);
  if (selfSignedCert)
    console.log(
      `  STARTTLS presents a self-signed certificate, ${selfSignedCert}: trust it, or set GATEPOST_SMTP_TLS_CERT and GATEPOST_SMTP_TLS_KEY.`,
    );
}
if (gatepost.inbound) {
  const { host, port } = gatepost.inbound;
  console.log(`Inbound MX listening on ${host}:${port} (STARTTLS, mail for inbound routes and return-path domains)`);
}
// Last, so that whoever waits for this line has everything above it.
if (gatepost.url) {
  const where = config.runtime === 'embedded' ? `data in ${config.dataDir}` : `role ${config.role}`;
  console.log(`Gatepost listening on ${gatepost.url} (runtime ${config.runtime}, ${where})`);
} else {
  console.log(`Gatepost hosting actors on app port ${config.appPort} (runtime dapr, sidecar on ${config.daprHttpPort})`);
  console.log(`  metrics of this actor host: GET ${gatepost.opsUrl}/metrics`);
}

let signals = 0;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (++signals > 1) process.exit(1);
    console.log(`${signal}: draining`);
    gatepost.stop().then(
      () => {
        console.log('Stopped: every request under way answered, every store closed.');
        process.exit(process.exitCode ?? 0);
      },
      (error: unknown) => {
        console.error('drain failed', error);
        process.exit(1);
      },
    );
  });
}
