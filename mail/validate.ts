// Address validation before a send (docs/validate.md): the syntax of RFC 5321/5322 with
// internationalised domains, where the domain's mail goes, the lists of validate.lists.ts, a
// typo suggestion, and the tenant's suppression list; then one verdict from what was found.
// No SMTP probing: nothing here connects to a mail server.
import { domainToASCII } from 'node:url';
import spellChecker from '@zootools/email-spell-checker';
import { LRUCache } from 'lru-cache';
import { isDomainName, isValidAddress, normalizeAddress } from './address.ts';
import { FREE_PROVIDERS, isDisposableDomain, isRoleAccount } from './validate.lists.ts';

export type ValidationResult = 'deliverable' | 'undeliverable' | 'risky' | 'unknown';

/**
 * Where a domain's mail goes, as its DNS answers: MX records; no MX but addresses of its own
 * (RFC 5321 §5.1); a null MX (RFC 7505); neither; no such domain; or no answer (timeout, SERVFAIL).
 */
export type MailHost = 'mx' | 'a_fallback' | 'null_mx' | 'no_host' | 'nxdomain' | 'unavailable';

/** What validation asks of the world, given by its caller: DNS, and the tenant's suppression list. */
export interface ValidationLookups {
  mailHost(asciiDomain: string): Promise<MailHost>;
  suppressed(address: string): Promise<boolean>;
}

/** Each check's finding; null where it was not made (no domain to check after a syntax failure) or DNS did not answer. */
export interface ValidationChecks {
  syntax: boolean;
  domain: boolean | null;
  mx: boolean | null;
  null_mx: boolean | null;
  disposable: boolean | null;
  role: boolean | null;
  free_provider: boolean | null;
  suppressed: boolean | null;
}

export interface Validation {
  address: string;
  result: ValidationResult;
  reasons: string[];
  checks: ValidationChecks;
  suggestion: string | null;
}

// RFC 5322 §3.2.3 atext, with the UTF-8 of RFC 6531 (SMTPUTF8) beside it.
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\u0080-\\u{10FFFF}]+";
const DOT_ATOM = new RegExp(`^${ATOM}(\\.${ATOM})*$`, 'u');
// RFC 5321 §4.1.2 Quoted-string: qtextSMTP or a backslash pair of printable ASCII, between quotes.
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;
const NON_ASCII = /[^\x00-\x7f]/;

const MAX_ADDRESS = 254;
const MAX_LOCAL = 64;

type Syntax = { ok: true; local: string; domain: string } | { ok: false; reason: string };

/** The local part and ASCII (punycode) domain of an address that is valid per RFC 5321/5322, or why it is not. */
export function parseSyntax(address: string): Syntax {
  // Octets, not characters, are what RFC 5321 §4.5.3.1 counts; a longer one needs no more reading.
  if (address.length > MAX_ADDRESS) return { ok: false, reason: 'address_too_long' };
  const at = address.lastIndexOf('@');
  if (at < 0) return { ok: false, reason: 'missing_at_sign' };
  const local = address.slice(0, at);
  const rawDomain = address.slice(at + 1);
  if (local === '') return { ok: false, reason: 'missing_local_part' };
  if (unpairedQuote(address)) return { ok: false, reason: 'unpaired_quote' };
  if (Buffer.byteLength(local) > MAX_LOCAL) return { ok: false, reason: 'local_part_too_long' };
  if (!local.startsWith('"')) {
    if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return { ok: false, reason: 'misplaced_dot' };
    if (!DOT_ATOM.test(local)) return { ok: false, reason: 'invalid_local_part' };
  } else if (!QUOTED.test(local)) return { ok: false, reason: 'invalid_local_part' };
  // An address literal ([192.0.2.1]) is valid RFC 5321, but no transactional mail goes to one, and Gatepost sends none.
  if (rawDomain.startsWith('[')) return { ok: false, reason: 'address_literal' };
  // Internationalised domains are looked up by their punycode form (RFC 5891); '' means it has none.
  const domain = domainToASCII(rawDomain);
  if (domain === '' || !isDomainName(domain)) return { ok: false, reason: 'invalid_domain' };
  if (Buffer.byteLength(local) + 1 + domain.length > MAX_ADDRESS) return { ok: false, reason: 'address_too_long' };
  return { ok: true, local, domain };
}

/** Whether a quote opens and never closes (a backslash escapes the character after it inside one). */
function unpairedQuote(text: string): boolean {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    if (quoted && text[i] === '\\') i++;
    else if (text[i] === '"') quoted = !quoted;
  }
  return quoted;
}

/** The checker's popular domains, and the free providers (hotmail.com is not among the former). */
const COMMON_DOMAINS: ReadonlySet<string> = new Set([...spellChecker.POPULAR_DOMAINS, ...FREE_PROVIDERS]);

// The checker measures the domain against every common one (tens of microseconds), and the same
// domains come back address after address: its answer is kept per domain ('' for none).
const suggestedDomains = new LRUCache<string, string>({ max: 10_000 });

/**
 * A likely intended address when the domain looks like a typo of a common one ("gmial.com"), or
 * null. Only whole common domains are suggested: the checker also offers a common TLD for any
 * rare one ("shop.example" → "shop.com"), which would flag every company on a small TLD.
 */
export function suggestionFor(local: string, domain: string): string | null {
  let suggested = suggestedDomains.get(domain);
  if (suggested === undefined) {
    // The checker reads a whole address; the local part plays no part in what it suggests.
    const found = spellChecker.run({ email: `x@${domain}` })?.domain;
    suggested = found && found !== domain && COMMON_DOMAINS.has(found) ? found : '';
    suggestedDomains.set(domain, suggested);
  }
  return suggested ? `${local}@${suggested}` : null;
}

const UNDELIVERABLE_HOSTS: Partial<Record<MailHost, string>> = {
  nxdomain: 'domain_not_found',
  null_mx: 'null_mx',
  no_host: 'no_mail_host',
};

/**
 * The verdict from what was found, strongest first: any reason the address cannot receive mail
 * (or Gatepost will not send to it) makes it undeliverable; else DNS that did not answer leaves
 * it unknown; else anything doubtful makes it risky; else it is deliverable.
 */
export function verdict(
  syntax: Syntax,
  found?: { host: MailHost; suppressed: boolean; suggestion: string | null },
): Omit<Validation, 'address'> {
  if (!syntax.ok) {
    return {
      result: 'undeliverable',
      reasons: [syntax.reason],
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
    };
  }
  const { local, domain } = syntax;
  const { host, suppressed, suggestion } = found!;
  const answered = host !== 'unavailable';
  const checks: ValidationChecks = {
    syntax: true,
    domain: answered ? host !== 'nxdomain' : null,
    mx: answered ? host === 'mx' || host === 'a_fallback' : null,
    null_mx: answered ? host === 'null_mx' : null,
    disposable: isDisposableDomain(domain),
    role: isRoleAccount(local),
    free_provider: FREE_PROVIDERS.has(domain),
    suppressed,
  };
  const undeliverable = [UNDELIVERABLE_HOSTS[host], suppressed && 'suppressed'].filter((r): r is string => !!r);
  const risky = [
    checks.disposable && 'disposable_domain',
    checks.role && 'role_account',
    suggestion && 'possible_typo',
    // Valid, but many systems refuse a quoted or non-ASCII local part, Gatepost's send API among them.
    !isValidAddress(`${local}@${domain}`) && (NON_ASCII.test(local) ? 'smtputf8_local_part' : 'quoted_local_part'),
  ].filter((r): r is string => !!r);
  const result: ValidationResult =
    undeliverable.length > 0 ? 'undeliverable' : !answered ? 'unknown' : risky.length > 0 ? 'risky' : 'deliverable';
  return {
    result,
    reasons: [...undeliverable, ...(answered ? [] : ['dns_unavailable']), ...risky],
    checks,
    suggestion,
  };
}

/** Validates one address: syntax first, then its domain's DNS and the suppression list together. */
export async function validateAddress(address: string, lookups: ValidationLookups): Promise<Validation> {
  const syntax = parseSyntax(address);
  if (!syntax.ok) return { address, ...verdict(syntax) };
  const [host, suppressed] = await Promise.all([
    lookups.mailHost(syntax.domain),
    lookups.suppressed(normalizeAddress(address)),
  ]);
  return { address, ...verdict(syntax, { host, suppressed, suggestion: suggestionFor(syntax.local, syntax.domain) }) };
}
