// DKIM signing of the exact bytes that leave (issue 21 item 3): two signatures per message, RSA-2048
// (rsa-sha256, which every verifier knows) and Ed25519 (ed25519-sha256, RFC 8463), both
// relaxed/relaxed. The canonicalisation and the field's format are mailauth's (its header parser,
// body hasher, header canonicaliser and signature formatter, as its own signer uses them); the
// signatures are node:crypto's, with keys parsed once per domain (a DkimSigner holds KeyObjects).
// mailauth's `dkimSign` takes keys as PEM and parses both for every message: with OpenSSL 3 a parse
// cost about 2 ms, as much as the RSA signature, and was a quarter of the event loop's work a
// delivered message in bench:deliver (bench/RESULTS.md, sixteenth pass).
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';

/** The keys of one verified sending domain (tenancy/domains.ts's signerFor makes it from the stored PEM). */
export interface DkimSigner {
  domain: string;
  rsa: { selector: string; privateKey: KeyObject };
  ed25519: { selector: string; privateKey: KeyObject };
}

/** A DkimSigner from the domain's stored keys (PEM, PKCS#8). */
export function dkimSigner(domain: string, keys: { rsa: DkimKeyPem; ed25519: DkimKeyPem }): DkimSigner {
  return {
    domain,
    rsa: { selector: keys.rsa.selector, privateKey: createPrivateKey(keys.rsa.private_key) },
    ed25519: { selector: keys.ed25519.selector, privateKey: createPrivateKey(keys.ed25519.private_key) },
  };
}

interface DkimKeyPem {
  selector: string;
  private_key: string;
}

/**
 * The header fields signed, those a message has (only the ones present are signed). From is
 * what DMARC aligns on; the rest are what a forger would change to reuse a signed message.
 */
export const SIGNED_HEADERS = [
  'From',
  'To',
  'Cc',
  'Subject',
  'Date',
  'Message-ID',
  'Reply-To',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
] as const;
const HEADER_LIST = SIGNED_HEADERS.join(':');

// mailauth's parts, as its DkimSigner (lib/dkim/dkim-signer.js) calls them. The package declares
// no types for them, nor exports map: these are the shapes this module relies on.
interface ParsedHeaders {
  parsed: { key: string | null; casedKey?: string; line: Buffer }[];
}
interface SignatureValues {
  a: string;
  c: string;
  s: string;
  d: string;
  h: string;
  bh: string;
  t?: number;
  b?: string;
}
const mailauth = createRequire(import.meta.url);
const { parseHeaders, getSigningHeaderLines, formatSignatureHeaderLine } = mailauth('mailauth/lib/tools.js') as {
  parseHeaders(headers: Buffer): ParsedHeaders;
  getSigningHeaderLines(parsed: ParsedHeaders['parsed'], fieldNames: string): { keys: string; headers: unknown[] };
  formatSignatureHeaderLine(type: 'DKIM', values: SignatureValues, folded: boolean): string;
};
const { dkimBody } = mailauth('mailauth/lib/dkim/body/index.js') as {
  dkimBody(
    canonicalization: 'relaxed',
    hashAlgo: 'sha256',
    maxBodyLength: false,
  ): {
    update(chunk: Buffer): void;
    digest(encoding: 'base64'): string;
  };
};
const { generateCanonicalizedHeader } = mailauth('mailauth/lib/dkim/header/index.js') as {
  generateCanonicalizedHeader(
    type: 'DKIM',
    lines: ReturnType<typeof getSigningHeaderLines>,
    options: {
      signingDomain: string;
      selector: string;
      algorithm: string;
      canonicalization: string;
      bodyHash: string;
      signTime: Date;
    },
  ): { canonicalizedHeader: Buffer; dkimHeaderOpts: SignatureValues };
};

/** `raw` with both DKIM-Signature fields put in front, and what they say (d=, and s= of each). */
export function signDkim(raw: Buffer, signer: DkimSigner): { raw: Buffer; d: string; s: string[] } {
  // composeRaw's bytes: CRLF line ends, the header ending at the first empty line.
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error('DKIM signing: the message has no body separator');
  const lines = getSigningHeaderLines(parseHeaders(raw.subarray(0, end + 2)).parsed, HEADER_LIST);
  const body = dkimBody('relaxed', 'sha256', false);
  body.update(raw.subarray(end + 4));
  const bodyHash = body.digest('base64');
  // One signing time for both signatures, the t= signed being the t= written.
  const signTime = new Date();

  const field = (algorithm: 'rsa-sha256' | 'ed25519-sha256', key: { selector: string; privateKey: KeyObject }): string => {
    const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', lines, {
      signingDomain: signer.domain,
      selector: key.selector,
      algorithm,
      canonicalization: 'relaxed/relaxed',
      bodyHash,
      signTime,
    });
    // RFC 8463 §3: Ed25519 signs the SHA-256 of the canonicalised header, RSA the header itself.
    const signature =
      algorithm === 'rsa-sha256'
        ? sign('sha256', canonicalizedHeader, key.privateKey)
        : sign(null, createHash('sha256').update(canonicalizedHeader).digest(), key.privateKey);
    return formatSignatureHeaderLine('DKIM', { ...dkimHeaderOpts, b: signature.toString('base64') }, true);
  };
  const fields = `${field('rsa-sha256', signer.rsa)}\r\n${field('ed25519-sha256', signer.ed25519)}\r\n`;
  return {
    raw: Buffer.concat([Buffer.from(fields), raw]),
    d: signer.domain,
    s: [signer.rsa.selector, signer.ed25519.selector],
  };
}
