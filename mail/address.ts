// Mailboxes: "Name <local@domain>" or a bare address. Parsing uses nodemailer's parser, the
// same one that writes the headers, so what we accept is what we can send.
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { LRUCache } from 'lru-cache';
import type { ErrorDetail } from '../errors/errors.catalog.ts';

export interface Mailbox {
  name: string;
  address: string;
}

// Practical RFC 5321 syntax: a dot-atom local part and a domain of labels with a TLD (or an
// address literal is refused: nobody sends transactional mail to one).
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Labels of 1-63 letters, digits and inner hyphens (an IDNA A-label is one), then a TLD of letters
// or an A-label: one expression, a sixth of the time of splitting the name and testing each label
// (a send tests a few). A label can match in only one way, so a failed match never backtracks
// through the ways of matching those before it.
const DOMAIN = /^(?:(?!-)[A-Za-z0-9-]{1,63}(?<!-)\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]+)$/i;

export function isValidAddress(address: string): boolean {
  if (address.length > 254) return false;
  const at = address.lastIndexOf('@');
  if (at < 1) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length > 64 || !LOCAL.test(local)) return false;
  return isDomainName(domain);
}

/** A host name of at least two labels, ending in a TLD: what may follow the @ of an address. */
export function isDomainName(domain: string): boolean {
  return domain.length <= 253 && DOMAIN.test(domain);
}

// The same few senders and many recipients come back again and again (every send parses its
// from, to and copies, some twice): parsed once, answered from here.
// lru-cache keeps no null: text that is no mailbox is kept as false.
const parsed = new LRUCache<string, Readonly<Mailbox> | false>({ max: 10_000 });

/** One mailbox, or null when the text is not exactly one valid mailbox. */
export function parseMailbox(text: string): Readonly<Mailbox> | null {
  let mailbox = parsed.get(text);
  if (mailbox === undefined) {
    mailbox = parseUncached(text) ?? false;
    parsed.set(text, mailbox);
  }
  return mailbox || null;
}

// Text made only of characters an address may hold, with no name, comment or list around it: what
// most recipients look like, and what the parser would return unchanged.
const BARE_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~@-]+$/;

function parseUncached(text: string): Readonly<Mailbox> | null {
  if (BARE_ADDRESS.test(text) && isValidAddress(text)) return Object.freeze({ name: '', address: text });
  if (/[\r\n\0]/.test(text)) return null;
  const parsed = addressparser(text, { flatten: true });
  if (parsed.length !== 1) return null;
  const { name, address } = parsed[0]!;
  if (!address || !isValidAddress(address)) return null;
  return Object.freeze({ name: name ?? '', address });
}

/** "Name <address>", quoting the name when it is more than atoms and spaces (RFC 5322 §3.2.5). */
export function formatMailbox(address: string, name?: string | null): string {
  if (!name) return address;
  const phrase = /^[\w !#$%&'*+\-/=?^`{|}~]*$/.test(name) ? name : `"${name.replace(/["\\]/g, '\\$&')}"`;
  return `${phrase} <${address}>`;
}

/**
 * The mailboxes of a comma-separated list ("Ann <ann@example.com>, bob@example.com"), each
 * written on its own; whether each is valid is for the gate to judge.
 */
export function splitAddressList(text: string): string[] {
  // Text that holds no address at all comes back as written, for the gate to refuse by name.
  return addressparser(text, { flatten: true }).map(({ name, address }) => (address ? formatMailbox(address, name) : name));
}

/** The form suppression and quota bookkeeping use: the same mailbox always gives the same key. */
export function normalizeAddress(address: string): string {
  return address.trim().toLowerCase();
}

export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

// C0 controls and DEL. The address parser reads "ann@example.com\r\nBcc: v@example.com" as one
// mailbox, v@example.com, and drops the rest without a word (issue 20, item 5): refused instead.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** One problem for each address field (by its name as the request gave it) holding a control character. */
export function controlCharacterProblems(fields: Record<string, string | readonly string[] | undefined>): ErrorDetail[] {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined && [value].flat().some((v) => CONTROL.test(v)))
    .map(([field]) => ({ field, message: 'holds a control character (CR, LF, NUL, ...)' }));
}
