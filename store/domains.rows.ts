// A sending domain as both catalogs store it: flat columns, the DKIM private keys sealed
// (lib/sealed.ts), each bound to its domain and column so a sealed key copied to another row
// does not open. Shared so that SQLite and PostgreSQL agree.
import { GatepostError } from '../errors/errors.catalog.ts';
import type { Sealer } from '../lib/sealed.ts';
import type { DomainCheck, DomainCreate, RecordCheck, SendingDomain } from './catalog.port.ts';

export interface DomainRow {
  id: string;
  tenant_id: string;
  name: string;
  status: SendingDomain['status'];
  rsa_selector: string;
  rsa_public: string;
  rsa_private: string;
  ed_selector: string;
  ed_public: string;
  ed_private: string;
  /** JSON text in SQLite, jsonb (read back as an object) in PostgreSQL. */
  checks: string | Record<string, RecordCheck>;
  tracking_host: string | null;
  checked_at: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

export const DOMAIN_COLUMNS =
  'id, tenant_id, name, status, rsa_selector, rsa_public, rsa_private, ed_selector, ed_public, ed_private, checks, tracking_host, checked_at, verified_at, created_at, updated_at';

const keyContext = (id: string, column: 'rsa_private' | 'ed_private') => `domains.${column}:${id}`;

export function newDomain(d: DomainCreate, at: string): SendingDomain {
  return { ...d, status: 'pending', checks: {}, checked_at: null, verified_at: null, created_at: at, updated_at: at };
}

/** The domain after a verification at `at`: verified_at is when it first became verified, null while pending. */
export function checkedDomain(d: SendingDomain, check: DomainCheck, at: string): SendingDomain {
  const verified_at = check.status === 'verified' ? (d.verified_at ?? at) : null;
  return { ...d, ...check, checked_at: at, verified_at, updated_at: at };
}

export function domainRow(d: SendingDomain, sealer: Sealer): DomainRow {
  return {
    id: d.id,
    tenant_id: d.tenant_id,
    name: d.name,
    status: d.status,
    rsa_selector: d.dkim.rsa.selector,
    rsa_public: d.dkim.rsa.public_key,
    rsa_private: sealer.seal(d.dkim.rsa.private_key, keyContext(d.id, 'rsa_private')),
    ed_selector: d.dkim.ed25519.selector,
    ed_public: d.dkim.ed25519.public_key,
    ed_private: sealer.seal(d.dkim.ed25519.private_key, keyContext(d.id, 'ed_private')),
    checks: JSON.stringify(d.checks),
    tracking_host: d.tracking_host,
    checked_at: d.checked_at,
    verified_at: d.verified_at,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}

export function domainOf(r: DomainRow, sealer: Sealer): SendingDomain {
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    name: r.name,
    status: r.status,
    dkim: {
      rsa: {
        selector: r.rsa_selector,
        public_key: r.rsa_public,
        private_key: sealer.open(r.rsa_private, keyContext(r.id, 'rsa_private')),
      },
      ed25519: {
        selector: r.ed_selector,
        public_key: r.ed_public,
        private_key: sealer.open(r.ed_private, keyContext(r.id, 'ed_private')),
      },
    },
    checks: typeof r.checks === 'string' ? (JSON.parse(r.checks) as Record<string, RecordCheck>) : r.checks,
    tracking_host: r.tracking_host,
    checked_at: r.checked_at,
    verified_at: r.verified_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export const domainTaken = (name: string) =>
  new GatepostError('domain_taken', `Another tenant has verified ${name}; it cannot be added or verified here.`);

export const domainExists = (name: string) =>
  new GatepostError('domain_exists', `This tenant already has the sending domain ${name}.`);
