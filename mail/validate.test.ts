// Address validation's syntax rules and its decision table (mail/validate.ts, docs/validate.md).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSyntax, suggestionFor, validateAddress, verdict, type MailHost } from './validate.ts';

describe('syntax (RFC 5321/5322)', () => {
  it.each([
    ['ann@example.com', 'ann', 'example.com'],
    ['ann.lee+orders@mail.example.co.uk', 'ann.lee+orders', 'mail.example.co.uk'],
    ['"ann lee"@example.com', '"ann lee"', 'example.com'],
    ['"a@b\\"c"@example.com', '"a@b\\"c"', 'example.com'],
    ['ann@bücher.de', 'ann', 'xn--bcher-kva.de'],
    ['ann@EXAMPLE.com', 'ann', 'example.com'],
    ['jörg@example.com', 'jörg', 'example.com'],
    [`${'a'.repeat(64)}@example.com`, 'a'.repeat(64), 'example.com'],
  ])('%s is valid', (address, local, domain) => {
    expect(parseSyntax(address)).toEqual({ ok: true, local, domain });
  });

  it.each([
    [`${'a'.repeat(290)}@example.com`, 'address_too_long'],
    // 230 characters as written, 255 octets once the domain is in punycode, which is what travels.
    [`${'a'.repeat(64)}@${Array(4).fill('ü'.repeat(40)).join('.')}.de`, 'address_too_long'],
    [`${'a'.repeat(65)}@example.com`, 'local_part_too_long'],
    ['ann.example.com', 'missing_at_sign'],
    ['@example.com', 'missing_local_part'],
    ['"ann@example.com', 'unpaired_quote'],
    ['ann"@example.com', 'unpaired_quote'],
    ['"ann\\"@example.com', 'unpaired_quote'],
    ['.ann@example.com', 'misplaced_dot'],
    ['ann.@example.com', 'misplaced_dot'],
    ['ann..lee@example.com', 'misplaced_dot'],
    ['ann lee@example.com', 'invalid_local_part'],
    ['ann(x)@example.com', 'invalid_local_part'],
    ['"a"b@example.com', 'invalid_local_part'],
    ['ann@[192.0.2.1]', 'address_literal'],
    ['ann@', 'invalid_domain'],
    ['ann@localhost', 'invalid_domain'],
    ['ann@exa mple.com', 'invalid_domain'],
    ['ann@-example.com', 'invalid_domain'],
    ['ann@example..com', 'invalid_domain'],
    ['ann@example.com.', 'invalid_domain'],
    ['ann@example.123', 'invalid_domain'],
  ])('%s is refused: %s', (address, reason) => {
    expect(parseSyntax(address)).toEqual({ ok: false, reason });
  });
});

describe('the typo suggestion', () => {
  it('suggests a common domain for a near miss, and nothing for a common domain or an unrelated one', () => {
    expect(suggestionFor('ann', 'gmial.com')).toBe('ann@gmail.com');
    expect(suggestionFor('ann', 'hotmial.com')).toBe('ann@hotmail.com');
    expect(suggestionFor('ann', 'gmail.com')).toBeNull();
    expect(suggestionFor('ann', 'shop.example')).toBeNull();
    expect(suggestionFor('ann', 'nomail.example')).toBeNull();
  });
});

describe('the decision table', () => {
  const ok = (address: string) => {
    const syntax = parseSyntax(address);
    if (!syntax.ok) throw new Error(`${address}: ${syntax.reason}`);
    return syntax;
  };
  const decide = (address: string, host: MailHost, suppressed = false, suggestion: string | null = null) =>
    verdict(ok(address), { host, suppressed, suggestion });

  it.each([
    ['ann@shop.example', 'mx', 'deliverable', []],
    ['ann@shop.example', 'a_fallback', 'deliverable', []],
    ['ann@shop.example', 'nxdomain', 'undeliverable', ['domain_not_found']],
    ['ann@shop.example', 'null_mx', 'undeliverable', ['null_mx']],
    ['ann@shop.example', 'no_host', 'undeliverable', ['no_mail_host']],
    ['ann@shop.example', 'unavailable', 'unknown', ['dns_unavailable']],
    ['ann@mailinator.com', 'mx', 'risky', ['disposable_domain']],
    ['ann@sub.mailinator.com', 'mx', 'risky', ['disposable_domain']],
    ['postmaster@shop.example', 'mx', 'risky', ['role_account']],
    ['No-Reply+x@shop.example', 'mx', 'risky', ['role_account']],
    ['"ann lee"@shop.example', 'mx', 'risky', ['quoted_local_part']],
    ['jörg@shop.example', 'mx', 'risky', ['smtputf8_local_part']],
    ['admin@mailinator.com', 'unavailable', 'unknown', ['dns_unavailable', 'disposable_domain', 'role_account']],
    ['admin@mailinator.com', 'null_mx', 'undeliverable', ['null_mx', 'disposable_domain', 'role_account']],
    ['ann@gmail.com', 'mx', 'deliverable', []],
  ] as const)('%s with %s is %s %j', (address, host, result, reasons) => {
    const v = decide(address, host);
    expect(v.result).toBe(result);
    expect(v.reasons).toEqual(reasons);
  });

  it('a suppressed address is undeliverable, whatever else holds', () => {
    expect(decide('ann@shop.example', 'mx', true)).toMatchObject({ result: 'undeliverable', reasons: ['suppressed'] });
    expect(decide('ann@shop.example', 'unavailable', true)).toMatchObject({
      result: 'undeliverable',
      reasons: ['suppressed', 'dns_unavailable'],
    });
  });

  it('a likely typo is risky and carries the suggestion', () => {
    expect(decide('ann@gmial.com', 'mx', false, 'ann@gmail.com')).toMatchObject({
      result: 'risky',
      reasons: ['possible_typo'],
      suggestion: 'ann@gmail.com',
    });
  });

  it('fills every check: booleans where found, null where DNS did not answer', () => {
    expect(decide('support@gmail.com', 'mx').checks).toEqual({
      syntax: true,
      domain: true,
      mx: true,
      null_mx: false,
      disposable: false,
      role: true,
      free_provider: true,
      suppressed: false,
    });
    expect(decide('ann@shop.example', 'null_mx').checks).toMatchObject({ domain: true, mx: false, null_mx: true });
    expect(decide('ann@shop.example', 'nxdomain').checks).toMatchObject({ domain: false, mx: false, null_mx: false });
    expect(decide('ann@shop.example', 'unavailable').checks).toMatchObject({ domain: null, mx: null, null_mx: null });
  });

  it('an invalid address is undeliverable with its reason and no other check made', () => {
    expect(verdict(parseSyntax('"ann@example.com'))).toEqual({
      result: 'undeliverable',
      reasons: ['unpaired_quote'],
      suggestion: null,
      checks: {
        syntax: false,
        domain: null,
        mx: null,
        null_mx: null,
        disposable: null,
        role: null,
        free_provider: null,
        suppressed: null,
      },
    });
  });
});

describe('validateAddress', () => {
  it('asks DNS for the punycode domain and the suppression list for the normalised address', async () => {
    const asked: string[] = [];
    const v = await validateAddress('Ann@Bücher.de', {
      mailHost: async (domain) => (asked.push(`mx ${domain}`), 'mx'),
      suppressed: async (address) => (asked.push(`suppressed ${address}`), address === 'ann@bücher.de'),
    });
    expect(asked.sort()).toEqual(['mx xn--bcher-kva.de', 'suppressed ann@bücher.de']);
    expect(v).toMatchObject({ address: 'Ann@Bücher.de', result: 'undeliverable', reasons: ['suppressed'] });
  });

  it('asks nothing for an address that is not one', async () => {
    const never = () => Promise.reject(new Error('asked'));
    const v = await validateAddress('a'.repeat(300), { mailHost: never, suppressed: never });
    expect(v).toMatchObject({ result: 'undeliverable', reasons: ['address_too_long'] });
  });
});

describe('any text', () => {
  it('gets a verdict, never an exception', async () => {
    const lookups = { mailHost: async () => 'mx' as const, suppressed: async () => false };
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc
        .tuple(fc.string({ unit: 'binary', maxLength: 70 }), fc.string({ unit: 'binary', maxLength: 70 }))
        .map(([local, domain]) => `${local}@${domain}`),
    );
    await fc.assert(
      fc.asyncProperty(text, async (address) => {
        const v = await validateAddress(address, lookups);
        expect(['deliverable', 'undeliverable', 'risky']).toContain(v.result);
        expect(v.result === 'deliverable').toBe(v.reasons.length === 0);
      }),
      { numRuns: 2000 },
    );
  });
});
