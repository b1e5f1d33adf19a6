// Signers' public keys parsed once, not for every signature checked (issue 23's speed). mailauth's
// DKIM and ARC verifiers fetch a key with `getPublicKey` (mailauth/lib/tools.js), which for every
// signature validates the record's base64, parses it into a key, checks it and exports it back to
// PEM, and `crypto.verify` then parses that PEM again: a quarter of the inbound reader thread's
// work in a bench:inbound profile (createPublicKey alone 16 %). Importing this module, before
// mailauth's verifiers are loaded, puts in its place one that still asks the resolver for the key
// record each time (so the record's TTL, kept by the resolver, decides when a rotated key is
// seen), and parses and checks each record it has not seen with mailauth's own function, keeping
// the answer as a KeyObject by the record's text. A record mailauth refuses is never kept.
//
// It relies on mailauth's verifiers taking `getPublicKey` from the tools module's exports when
// they load (dkim-verifier.js, arc/index.js), as mailauth 4 does; mail/verdicts.test.ts proves
// the checks still pass and fail as they should, and mail/dkim.keys.test.ts that a key is kept.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { LRUCache } from 'lru-cache';

type Resolver = (name: string, type: string) => Promise<unknown>;
interface PublicKey {
  /** PEM from mailauth's own function; a KeyObject from the kept ones (whose toString is that PEM). */
  publicKey: string | KeyObject;
  rr: string;
  modulusLength: number;
}
type GetPublicKey = (type: string, name: string, minBitLength: number | undefined, resolver: Resolver) => Promise<PublicKey>;

const tools = createRequire(import.meta.url)('mailauth/lib/tools.js') as { getPublicKey: GetPublicKey };
const parseAndCheck = tools.getPublicKey;

/** Checked keys by `type minBitLength record`: a few hundred bytes each. */
const kept = new LRUCache<string, PublicKey>({ max: 10_000 });

/** The record's text as mailauth reads it: the first TXT answer's strings joined, no white space. */
const recordOf = (answer: unknown): string =>
  Array.isArray(answer)
    ? ([] as unknown[])
        .concat(answer[0] ?? [])
        .join('')
        .replace(/\s+/g, '')
    : '';

async function keptPublicKey(
  type: string,
  name: string,
  minBitLength: number | undefined,
  resolver: Resolver,
): Promise<PublicKey> {
  const answer = await resolver(name, 'TXT');
  // mailauth's function asks again: the same answer, not a second look-up.
  const again: Resolver = async () => answer;
  const rr = recordOf(answer);
  if (!rr) return parseAndCheck(type, name, minBitLength, again);
  const key = `${type} ${minBitLength ?? ''} ${rr}`;
  const found = kept.get(key);
  if (found) return { ...found };
  const checked = await parseAndCheck(type, name, minBitLength, again);
  const pem = String(checked.publicKey);
  const publicKey = createPublicKey(pem);
  // mailauth reports the key it used as text (a result's publicKey): the same PEM as before.
  Object.defineProperty(publicKey, 'toString', { value: () => pem });
  const keep = { publicKey, rr: checked.rr, modulusLength: checked.modulusLength };
  kept.set(key, keep);
  return { ...keep };
}

tools.getPublicKey = keptPublicKey;

/** How many checked keys are kept (for the test that a key is parsed once). */
export const keptKeys = (): number => kept.size;
