// DKIM signing of the exact bytes that leave (issue 21 item 3): two signatures per message, RSA-2048
// (rsa-sha256, which every verifier knows) and Ed25519 (ed25519-sha256, RFC 8463), both
// relaxed/relaxed. mailauth signs; Gatepost does no canonicalisation of its own.
import { dkimSign, type DKIMSignOptions } from 'mailauth';

/** The keys of one verified sending domain, as tenancy/domains.ts's signerFor gives them (PEM). */
export interface DkimSigner {
  domain: string;
  rsa: { selector: string; privateKey: string };
  ed25519: { selector: string; privateKey: string };
}

/**
 * The header fields signed, those a message has (mailauth signs only the ones present). From is
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

/** `raw` with both DKIM-Signature fields put in front, and what they say (d=, and s= of each). */
export async function signDkim(raw: Buffer, signer: DkimSigner): Promise<{ raw: Buffer; d: string; s: string[] }> {
  const common = { signingDomain: signer.domain, canonicalization: 'relaxed/relaxed' };
  // One signing time for both signatures, given: left unset, mailauth reads the clock once for the
  // header it signs and again for the header it writes, and an RSA signature made across a second's
  // turn carried a t= other than the one signed (10 bad signatures in 5,000 in bench:deliver).
  // mailauth makes one signature per signatureData entry (its typings also ask for one at the top
  // level, which its signer ignores), and reads headerList as one colon-separated string.
  const result = await dkimSign(raw, {
    signTime: new Date(),
    headerList: SIGNED_HEADERS.join(':'),
    signatureData: [
      { ...common, selector: signer.rsa.selector, privateKey: signer.rsa.privateKey, algorithm: 'rsa-sha256' },
      { ...common, selector: signer.ed25519.selector, privateKey: signer.ed25519.privateKey, algorithm: 'ed25519-sha256' },
    ],
  } as unknown as DKIMSignOptions);
  if (result.errors.length > 0) {
    // mailauth lists each failed signature as { selector, err }.
    const failed = result.errors as unknown as { selector?: string; err?: Error }[];
    throw new Error(
      `DKIM signing failed for ${signer.domain}: ${failed.map((f) => `${f.selector}: ${f.err?.message}`).join('; ')}`,
    );
  }
  return {
    raw: Buffer.concat([Buffer.from(result.signatures), raw]),
    d: signer.domain,
    s: [signer.rsa.selector, signer.ed25519.selector],
  };
}
