// Audiences and contacts as both catalogs store them: one refusal, one row shape, one id-or-email rule.
import { GatepostError } from '../errors/errors.catalog.ts';
import type { Contact, ContactPatch } from './catalog.port.ts';

/** An audience with its count of contacts (the audience aliased `a`). */
export const AUDIENCE_COLUMNS =
  'a.id, a.tenant_id, a.name, a.created_at, (SELECT CAST(count(*) AS integer) FROM contacts c WHERE c.audience_id = a.id) AS contacts';

export const CONTACT_COLUMNS = 'id, tenant_id, audience_id, email, name, data, unsubscribed, created_at, updated_at';

export const contactExists = (email: string) =>
  new GatepostError('contact_exists', `The audience already has a contact with the email "${email}".`);

/** A contact's id starts `con_`; anything else asked for is an email. */
export const isContactId = (idOrEmail: string) => idOrEmail.startsWith('con_');

/** A contact as a store returns it: SQLite gives `data` as text and the flag as 0 or 1. */
export type ContactRow = Omit<Contact, 'data' | 'unsubscribed'> & {
  data: string | Record<string, unknown>;
  unsubscribed: number | boolean;
};

export const contactOf = (row: ContactRow): Contact => ({
  ...row,
  data: typeof row.data === 'string' ? (JSON.parse(row.data) as Record<string, unknown>) : row.data,
  unsubscribed: Boolean(row.unsubscribed),
});

/** The contact with the patch's given fields applied, as both stores write it. */
export function patchedContact(c: Contact, patch: ContactPatch, at: string): Contact {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  return { ...c, ...defined, updated_at: at };
}
