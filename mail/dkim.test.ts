// DKIM signing checked by someone else: mailauth's verifier, reading the public keys from a DNS
// server on loopback that serves the records tenancy/domains.ts told the tenant to publish.
import { Resolver } from 'node:dns/promises';
import { join } from 'node:path';
import { dkimSign, dkimVerify, type DKIMResult, type DKIMSignOptions } from 'mailauth';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { Domains } from '../tenancy/domains.ts';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { TEST_RECORD_SETTINGS, verifiedDomain } from '../test/harness/domains.harness.ts';
import { tempDir } from '../test/harness/gatepost.harness.ts';
import { SIGNED_HEADERS, signDkim, type DkimSigner } from './dkim.ts';
import { outgoingBytes, OutgoingFailed } from './outgoing.thread.ts';

let dns: DnsServer;
let catalog: SqliteCatalog;
let signer: DkimSigner;

/** mailauth's look-ups, asked of the loopback server by Node's own resolver. */
const verify = (raw: Buffer) => {
  const resolver = new Resolver();
  resolver.setServers([dns.address]);
  return dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]> });
};

function message(extra: Record<string, string> = {}): Promise<Buffer> {
  return new MailComposer({
    from: 'Shop <orders@signed.example.com>',
    to: 'ann@example.net',
    cc: 'bob@example.net',
    replyTo: 'help@signed.example.com',
    subject: 'Your order',
    messageId: '<msg_1@signed.example.com>',
    date: new Date('2026-11-26T00:00:00Z'),
    text: 'Thank you for your order.\n',
    html: '<p>Thank you for your order.</p>',
    headers: {
      'List-Unsubscribe': '<https://gatepost.test/u/abc>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'X-Campaign': 'not signed',
      ...extra,
    },
  })
    .compile()
    .build();
}

beforeAll(async () => {
  dns = await startDns();
  catalog = new SqliteCatalog(join(tempDir('dkim'), 'catalog.db'));
  await catalog.createTenant({ id: 'ten_d', name: 'D', default_from: null, quota: { per_second: null, per_day: null } });
  const domains = new Domains(catalog, { ...TEST_RECORD_SETTINGS, dnsServers: [dns.address] });
  await verifiedDomain(domains, dns, 'ten_d', 'signed.example.com');
  signer = (await domains.signerFor('ten_d', 'signed.example.com'))!;
});
afterAll(async () => {
  await catalog.close();
  await dns.close();
});

describe('signDkim', () => {
  it('signs with RSA-2048 and Ed25519, relaxed/relaxed, and both pass mailauth against the published records', async () => {
    const raw = await message();
    const signed = signDkim(raw, signer);
    expect(signed.d).toBe('signed.example.com');
    expect(signed.s).toEqual([signer.rsa.selector, signer.ed25519.selector]);
    expect(signed.raw.subarray(signed.raw.length - raw.length).equals(raw)).toBe(true);

    // What mailauth reports (its typings name algo and format algorithm and canonicalization).
    const results = (await verify(signed.raw)).results as (DKIMResult & { algo?: string; format?: string })[];
    expect(results.map((r) => ({ d: r.signingDomain, s: r.selector, a: r.algo, c: r.format, result: r.status.result }))).toEqual([
      { d: 'signed.example.com', s: signer.rsa.selector, a: 'rsa-sha256', c: 'relaxed/relaxed', result: 'pass' },
      { d: 'signed.example.com', s: signer.ed25519.selector, a: 'ed25519-sha256', c: 'relaxed/relaxed', result: 'pass' },
    ]);
    expect(results.every((r) => r.status.aligned)).toBe(true);
  });

  it("writes exactly the fields mailauth's own signer writes for the same keys and time", async () => {
    // Both signatures are deterministic (RSASSA-PKCS1-v1_5 and Ed25519): the same bytes signed with
    // the same keys give the same fields, so signDkim's use of mailauth's parts is checked whole.
    const raw = await message();
    const at = new Date('2026-11-26T08:00:00Z');
    vi.useFakeTimers({ toFake: ['Date'], now: at });
    let ours: Buffer;
    try {
      ours = signDkim(raw, signer).raw;
    } finally {
      vi.useRealTimers();
    }
    const pem = (k: DkimSigner['rsa']) => k.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const common = { signingDomain: signer.domain, canonicalization: 'relaxed/relaxed' };
    const theirs = await dkimSign(raw, {
      signTime: at,
      headerList: SIGNED_HEADERS.join(':'),
      signatureData: [
        { ...common, selector: signer.rsa.selector, privateKey: pem(signer.rsa), algorithm: 'rsa-sha256' },
        { ...common, selector: signer.ed25519.selector, privateKey: pem(signer.ed25519), algorithm: 'ed25519-sha256' },
      ],
    } as unknown as DKIMSignOptions);
    expect(theirs.errors).toEqual([]);
    expect(ours.toString()).toBe(theirs.signatures + raw.toString());
  });

  it('signs the t= it writes, even when the clock passes a second while the RSA signature is made', async () => {
    const raw = await message();
    // Every reading of the clock a second after the one before: the header signed and the
    // header written would each read a time of their own.
    let now = Date.parse('2026-11-26T00:00:00.400Z');
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (now += 1000));
    let signed: Buffer;
    try {
      signed = signDkim(raw, signer).raw;
    } finally {
      clock.mockRestore();
    }
    const { results } = await verify(signed);
    expect(results.map((r) => r.status.result)).toEqual(['pass', 'pass']);
  });

  it('signs the headers a forger would change, those the message has, and no others', async () => {
    const signed = signDkim(await message(), signer);
    const header = signed.raw
      .toString()
      .split('\r\n\r\n')[0]!
      .replace(/\r\n[ \t]+/g, ' ');
    const lists = [...header.matchAll(/^DKIM-Signature:.*?\bh=([^;]+);/gim)].map((m) =>
      m[1]!.replace(/\s+/g, '').toLowerCase().split(':'),
    );
    expect(lists).toHaveLength(2);
    for (const h of lists) {
      expect([...h].sort()).toEqual(
        [
          'from',
          'to',
          'cc',
          'subject',
          'date',
          'message-id',
          'reply-to',
          'mime-version',
          'content-type',
          'list-unsubscribe',
          'list-unsubscribe-post',
        ].sort(),
      );
    }
  });

  it('fails verification when one byte of the body changes after signing', async () => {
    const signed = signDkim(await message(), signer).raw.toString('latin1');
    const tampered = Buffer.from(signed.replace('Thank you for your order.', 'Thank you for your ordes.'), 'latin1');
    expect(tampered.equals(Buffer.from(signed, 'latin1'))).toBe(false);
    const { results } = await verify(tampered);
    expect(results.map((r) => r.status.result)).toEqual(['neutral', 'neutral']);
    expect(results.every((r) => /body hash did not verify/.test(r.status.comment ?? ''))).toBe(true);
  });

  it('fails verification when a signed header changes', async () => {
    const signed = signDkim(await message(), signer).raw.toString('latin1');
    const { results } = await verify(Buffer.from(signed.replace('Subject: Your order', 'Subject: Your order!'), 'latin1'));
    expect(results.map((r) => r.status.result)).toEqual(['fail', 'fail']);
  });
});

describe('the outgoing thread', () => {
  const content = {
    from: 'Shop <orders@signed.example.com>',
    to: 'ann@example.net',
    reply_to: null,
    subject: 'Your parcel',
    html: '<p>Your parcel is on its way.</p>',
    text: null,
    headers: {},
  };
  const at = { messageId: '<msg_2@signed.example.com>', date: new Date() };

  it('composes and signs there, and both signatures pass', async () => {
    const out = await outgoingBytes(content, at, signer);
    expect(out.dkim).toEqual({ d: 'signed.example.com', s: [signer.rsa.selector, signer.ed25519.selector] });
    expect(out.raw.toString()).toMatch(/^DKIM-Signature:[\s\S]*Subject: Your parcel[\s\S]*Your parcel is on its way\./);
    const { results } = await verify(out.raw);
    expect(results.map((r) => r.status.result)).toEqual(['pass', 'pass']);
  });

  it('composes without signing for a message with no signer', async () => {
    const out = await outgoingBytes(content, at, null);
    expect(out.dkim).toBeNull();
    expect(out.raw.toString()).not.toContain('DKIM-Signature');
    expect(out.raw.toString()).toContain('Message-ID: <msg_2@signed.example.com>');
  });

  it('tells a signing failure as one (the delivery defers it), and goes on with the next message', async () => {
    // An Ed25519 key where the RSA one should be: node:crypto refuses an RSA signature with it.
    const wrong = { ...signer, rsa: { ...signer.rsa, privateKey: signer.ed25519.privateKey } };
    const failed = await outgoingBytes(content, at, wrong).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OutgoingFailed);
    expect((failed as OutgoingFailed).stage).toBe('sign');
    expect((await outgoingBytes(content, at, signer)).dkim?.d).toBe('signed.example.com');
  });
});
