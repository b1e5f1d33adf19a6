// Webhook secrets, DKIM private keys and receipt signing keys at rest, for every catalog: sealed
// when a key is set, readable through the catalog, never in the stored row, and still readable
// after the key rotates (issue 20, item 8; issue 21, items 1 and 6).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyId, keySealer, plainSealer, type Sealer } from '../lib/sealed.ts';
import type { Catalog } from './catalog.port.ts';

export interface SealedStore {
  /** A catalog on the store, sealing with `sealer`; the same store each time. */
  open(sealer: Sealer): Promise<Catalog>;
  /** The secret and previous_secret columns of every webhook row, as stored. */
  rawSecrets(): Promise<(string | null)[]>;
  /** The rsa_private and ed_private columns of every domain row, as stored. */
  rawDomainKeys(): Promise<string[]>;
  /** The private_key column of every receipt key row, as stored. */
  rawReceiptKeys(): Promise<string[]>;
  cleanup(): Promise<void>;
}

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const RSA_PEM = '-----BEGIN PRIVATE KEY-----\nrsa\n-----END PRIVATE KEY-----\n';
const ED_PEM = '-----BEGIN PRIVATE KEY-----\ned\n-----END PRIVATE KEY-----\n';
const ROTATED = 'whsec_rotatedRotatedRotatedRotated0000';

export function sealedSecretsContract(name: string, store: () => Promise<SealedStore>): void {
  describe(`${name}: webhook secrets at rest`, () => {
    it('seals secrets under the key, reads them back, and rotates to a new key on the next write', async () => {
      const s = await store();
      try {
        const first = randomBytes(32);
        const second = randomBytes(32);
        let catalog = await s.open(keySealer(first));
        const quota = { per_second: null, per_day: null };
        await catalog.createTenant({ id: 'ten_s', name: 'S', default_from: null, quota });
        const dkim = {
          rsa: { selector: 'gp202611r', public_key: 'rsapub', private_key: RSA_PEM },
          ed25519: { selector: 'gp202611e', public_key: 'edpub', private_key: ED_PEM },
        };
        await catalog.createDomain({ id: 'dom_s', tenant_id: 'ten_s', name: 'sealed.example.com', dkim, tracking_host: null });
        expect((await catalog.getDomain('ten_s', 'dom_s'))!.dkim).toEqual(dkim);
        const storedKeys = await s.rawDomainKeys();
        expect(storedKeys).toHaveLength(2);
        for (const k of storedKeys) expect(k).toMatch(new RegExp(`^sealed:v1:${keyId(first)}:`));
        expect(storedKeys.join()).not.toContain('PRIVATE KEY');
        await catalog.createWebhook({
          id: 'whk_s',
          tenant_id: 'ten_s',
          url: 'https://h.example.com/',
          events: ['email.sent'],
          secret: SECRET,
        });
        expect((await catalog.getWebhook('ten_s', 'whk_s'))!.secret).toBe(SECRET);
        const [stored] = await s.rawSecrets();
        expect(stored).not.toContain(SECRET);
        expect(stored).toMatch(new RegExp(`^sealed:v1:${keyId(first)}:`));
        await catalog.close();

        // The second key is current; the first still opens what it sealed.
        catalog = await s.open(keySealer(second, [first]));
        expect((await catalog.webhooksFor('ten_s', 'email.sent')).map((w) => w.secret)).toEqual([SECRET]);
        // A key sealed under the old key still opens.
        expect(await catalog.getDomain('ten_s', 'dom_s')).toMatchObject({
          dkim: { rsa: { private_key: RSA_PEM }, ed25519: { private_key: ED_PEM } },
        });
        await catalog.rotateWebhookSecret('ten_s', 'whk_s', ROTATED, new Date(Date.now() + 60_000).toISOString());
        const rotated = (await catalog.listWebhooks('ten_s'))[0]!;
        expect([rotated.secret, rotated.previous_secret]).toEqual([ROTATED, SECRET]);
        const raw = await s.rawSecrets();
        expect(raw.every((v) => v!.startsWith(`sealed:v1:${keyId(second)}:`))).toBe(true);
        expect(raw.join()).not.toContain('whsec_');
        await catalog.close();

        // Without the key, a sealed secret is an error, not a wrong signature.
        catalog = await s.open(plainSealer);
        await expect(catalog.getWebhook('ten_s', 'whk_s')).rejects.toThrow(/GATEPOST_ENCRYPTION_KEY is not set/);
        await catalog.close();
      } finally {
        await s.cleanup();
      }
    });

    it('seals the private half of receipt signing keys, and opens it under an old key after rotation', async () => {
      const s = await store();
      try {
        const first = randomBytes(32);
        const pem = '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIP\n-----END PRIVATE KEY-----\n';
        let catalog = await s.open(keySealer(first));
        const key = await catalog.createReceiptKey({
          kid: 'kid_s',
          public_jwk: { kty: 'OKP', crv: 'Ed25519', x: 'x' },
          private_key: pem,
        });
        expect(key.private_key).toBe(pem);
        const [stored] = await s.rawReceiptKeys();
        expect(stored).not.toContain('PRIVATE KEY');
        expect(stored).toMatch(new RegExp(`^sealed:v1:${keyId(first)}:`));
        await catalog.close();

        catalog = await s.open(keySealer(randomBytes(32), [first]));
        expect((await catalog.currentReceiptKey())!.private_key).toBe(pem);
        await catalog.close();
      } finally {
        await s.cleanup();
      }
    });
  });
}
