import { describe, expect, it } from 'vitest';
import { providerOfHost } from './provider.ts';

describe('providerOfHost', () => {
  it('names the big providers by their MX hosts, and any other by its last two labels', () => {
    expect(providerOfHost('aspmx.l.google.com')).toBe('google');
    expect(providerOfHost('ALT1.ASPMX.L.GOOGLE.COM.')).toBe('google');
    expect(providerOfHost('acme-com.mail.protection.outlook.com')).toBe('microsoft');
    expect(providerOfHost('mta7.am0.yahoodns.net')).toBe('yahoo');
    expect(providerOfHost('mx01.mail.icloud.com')).toBe('apple');
    expect(providerOfHost('mx1.mail.example.net')).toBe('example.net');
    // A name ending like a provider's is not that provider.
    expect(providerOfHost('mx.notgoogle.com')).toBe('notgoogle.com');
  });
});
