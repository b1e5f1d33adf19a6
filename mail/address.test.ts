// Mailbox parsing: what the gate accepts as a sender or a recipient.
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { describe, expect, it } from 'vitest';
import { isDomainName, parseMailbox } from './address.ts';

describe('parseMailbox', () => {
  it('reads a bare address and a named mailbox', () => {
    expect(parseMailbox('ann@example.com')).toEqual({ name: '', address: 'ann@example.com' });
    expect(parseMailbox("o'brien+tag@mail.example.org")).toEqual({ name: '', address: "o'brien+tag@mail.example.org" });
    expect(parseMailbox('Ann Lee <ann@example.com>')).toEqual({ name: 'Ann Lee', address: 'ann@example.com' });
    expect(parseMailbox('"Lee, Ann" <ann@example.com>')).toEqual({ name: 'Lee, Ann', address: 'ann@example.com' });
  });

  it('refuses what is not exactly one valid mailbox', () => {
    for (const text of [
      'ann@localhost',
      'ann@@example.com',
      '@example.com',
      'ann.@example.com',
      'ann@-example.com',
      'ann@example.com, bob@example.com',
      'ann@example.com\r\nBcc: eve@example.com',
      'Ann <ann@example>',
      '',
    ]) {
      expect(parseMailbox(text), text).toBeNull();
    }
  });

  it('answers a bare address as the address parser does', () => {
    for (const text of ['ann@example.com', 'a.b-c_d@x.example.co.uk', 'UPPER@Example.COM', '1@2.io']) {
      const [parsed] = addressparser(text, { flatten: true });
      expect(parseMailbox(text)).toEqual({ name: parsed!.name, address: parsed!.address });
    }
  });
});

describe('isDomainName', () => {
  it('takes host names with a TLD, and refuses what cannot follow an @', () => {
    for (const d of [
      'example.com',
      'mg.example.co.uk',
      'xn--bcher-kva.example',
      'Mail.Example.XN--P1AI',
      `${'a'.repeat(63)}.com`,
    ]) {
      expect(isDomainName(d), d).toBe(true);
    }
    for (const d of [
      'localhost',
      'a-.com',
      `${'a'.repeat(64)}.com`,
      `xn--${'a'.repeat(60)}.com`,
      'example.c0m',
      // Forty labels that could each be read two ways, then a character no name holds: refused
      // at once, not after trying every way of reading them.
      `${'xn--a.'.repeat(40)}!`,
      'a..com',
      '-a.com',
      'a b.com',
      'x.com>\r\nBcc: v@x.com',
      'evil.com@x',
      '',
      `${'a'.repeat(250)}.com`,
    ]) {
      expect(isDomainName(d), d).toBe(false);
    }
  });
});
