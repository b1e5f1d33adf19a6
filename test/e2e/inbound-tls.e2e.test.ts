// The inbound MX's own certificate (GATEPOST_INBOUND_TLS_CERT/KEY) through a real Gatepost process
// (either runtime): STARTTLS on the inbound port presents it, while SMTP submission presents its
// own (GATEPOST_SMTP_TLS_CERT/KEY). Each is read from the TLS handshake of a plain SMTP client.
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatepost, tempDir, type GatepostProcess } from '../harness/gatepost.harness.ts';
import { selfSignedCertificate } from '../harness/receiver.harness.ts';

let gp: GatepostProcess;

beforeAll(async () => {
  const dir = tempDir('inbound-tls');
  const env: Record<string, string> = {};
  for (const [prefix, name] of [['GATEPOST_SMTP_TLS', 'submit.gatepost.test'], ['GATEPOST_INBOUND_TLS', 'mx.gatepost.test']]) {
    const { cert, key } = await selfSignedCertificate([name!]);
    writeFileSync(join(dir, `${name}.crt`), cert);
    writeFileSync(join(dir, `${name}.key`), key);
    env[`${prefix}_CERT`] = join(dir, `${name}.crt`);
    env[`${prefix}_KEY`] = join(dir, `${name}.key`);
  }
  gp = await startGatepost({ env });
});
afterAll(async () => {
  await gp?.dispose();
});

/** The next whole SMTP reply on the socket (its last line has a space after the code). */
function reply(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (/^\d{3} .*\r\n/m.test(text)) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/** The common name of the certificate STARTTLS presents on `port`. */
async function presented(port: number): Promise<string | undefined> {
  const socket = connect(port, '127.0.0.1');
  try {
    expect(await reply(socket)).toMatch(/^220 /);
    socket.write('EHLO client.test\r\n');
    expect(await reply(socket)).toContain('STARTTLS');
    socket.write('STARTTLS\r\n');
    expect(await reply(socket)).toMatch(/^220 /);
    const secure = tlsConnect({ socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
    const name = secure.getPeerCertificate().subject.CN;
    secure.destroy();
    return Array.isArray(name) ? name.join(',') : name;
  } finally {
    socket.destroy();
  }
}

describe('the inbound MX with a certificate of its own', () => {
  it('presents it on STARTTLS, while SMTP submission presents its own', async () => {
    expect(await presented(gp.inboundPort)).toBe('mx.gatepost.test');
    expect(await presented(gp.smtpPort)).toBe('submit.gatepost.test');
  });
});
