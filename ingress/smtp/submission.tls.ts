// The certificate STARTTLS presents: the operator's (GATEPOST_SMTP_TLS_CERT and
// GATEPOST_SMTP_TLS_KEY, PEM files), or for development a self-signed one, generated at the first
// start and kept in the data directory so that a client can be told to trust it once.
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface TlsIdentity {
  key: string;
  cert: string;
  /** Where the generated certificate is, for clients to trust; null for the operator's own. */
  selfSignedPath: string | null;
}

/** The folder of the data directory the generated certificate and its key are kept in. */
const SELF_SIGNED_DIR = 'smtp-tls';

export async function submissionTls(opts: {
  configured: { cert: string; key: string } | null;
  dataDir: string;
  hostname: string;
}): Promise<TlsIdentity> {
  if (opts.configured) {
    const [cert, key] = await Promise.all([readFile(opts.configured.cert, 'utf8'), readFile(opts.configured.key, 'utf8')]);
    return { cert, key, selfSignedPath: null };
  }
  const dir = join(opts.dataDir, SELF_SIGNED_DIR);
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  const kept = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]).catch(() => null);
  if (kept && stillGood(kept[0], opts.hostname)) return { cert: kept[0], key: kept[1], selfSignedPath: certPath };

  const pems = await generate([{ name: 'commonName', value: opts.hostname }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 365 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: opts.hostname },
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(keyPath, pems.private, { mode: 0o600 });
  await writeFile(certPath, pems.cert);
  return { cert: pems.cert, key: pems.private, selfSignedPath: certPath };
}

/** A kept certificate serves while it names this host and has more than a day to run. */
function stillGood(pem: string, hostname: string): boolean {
  try {
    const cert = new X509Certificate(pem);
    return cert.checkHost(hostname) !== undefined && Date.parse(cert.validTo) > Date.now() + 86_400_000;
  } catch {
    return false;
  }
}
