// Run by smtp.e2e.test.ts in a network namespace of its own (unshare -n) whose loopback device
// also carries 192.0.2.1, an address that is not loopback, so that nothing leaves the machine:
// starts Gatepost with SMTP submission on every address, connects from 192.0.2.1, and tries
// AUTH (PLAIN, then LOGIN) and MAIL without TLS, then sends with STARTTLS. Prints the replies as
// one line of JSON.
import { startGatepost } from '../harness/gatepost.harness.ts';
import { dialog, selfSignedCert, submission } from '../harness/submission.harness.ts';

const ADDRESS = '192.0.2.1';

const gp = await startGatepost({ env: { GATEPOST_SMTP_HOST: '0.0.0.0' } });
try {
  const tenant = await gp.tenant();
  const plain = await dialog(gp.smtpPort, ADDRESS);
  const ehlo = await plain.say('EHLO probe.test');
  const authPlain = await plain.say(`AUTH PLAIN ${Buffer.from(`\0app\0${tenant.sandbox}`).toString('base64')}`);
  const authLogin = await plain.say('AUTH LOGIN');
  const mail = await plain.say('MAIL FROM:<app@sender.example>');
  plain.close();
  // The certificate names the host, not this address: tell TLS which name to check.
  const sent = await submission(gp, tenant.sandbox, {
    host: ADDRESS,
    tls: { ca: selfSignedCert(gp), servername: 'gatepost.test' },
  }).sendMail({ from: 'app@sender.example', to: 'far@example.com', subject: 'From afar', text: 'hello' });
  console.log(JSON.stringify({ ehlo, authPlain, authLogin, mail, sent: sent.response }));
} finally {
  await gp.dispose();
}
