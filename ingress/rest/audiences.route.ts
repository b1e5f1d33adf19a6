// /v1/audiences: audiences, their contacts, and CSV import (docs/broadcasts.md). Thin: the
// catalog keeps them, tenancy/contacts.import.ts reads a CSV. Another tenant's audience is, to a
// key, one that does not exist (404).
import { Readable } from 'node:stream';
import { z } from 'zod';
import { GatepostError, invalid } from '../../errors/errors.catalog.ts';
import { newId } from '../../lib/ids.ts';
import { isValidAddress, normalizeAddress } from '../../mail/address.ts';
import type { Audience, Catalog, Contact } from '../../store/catalog.port.ts';
import { importContacts } from '../../tenancy/contacts.import.ts';
import type { AutomationTriggers } from '../../gate/automations.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, documentationOnly, refusal, type ZodApp } from './schema.http.ts';
import { IdParam, listOf, PageQuery, pageOf } from './schemas.ts';

const AudienceCreate = z.object({ name: z.string().min(1).max(200) }).strict();
const AudienceView = z.object({
  id: z.string().meta({ description: 'aud_…' }),
  name: z.string(),
  contacts: z.number().int().meta({ description: 'How many contacts it holds, unsubscribed ones included.' }),
  created_at: z.string(),
});

const Email = z.string().min(3).max(254).meta({ description: 'The address alone (no display name); stored in lower case.' });
const Data = z
  .record(z.string(), z.unknown())
  .meta({ description: 'Merge variables a broadcast renders with, beside email and name.' });
const ContactCreate = z
  .object({
    email: Email,
    name: z.string().max(200).nullable().optional(),
    data: Data.optional(),
    unsubscribed: z.boolean().optional(),
  })
  .strict();
const ContactUpdate = ContactCreate.partial().strict().meta({ description: 'The fields to change; data is replaced whole.' });
const ContactView = z.object({
  id: z.string().meta({ description: 'con_…' }),
  audience_id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  unsubscribed: z.boolean().meta({ description: 'Set, every broadcast to the audience skips the contact.' }),
  created_at: z.string(),
  updated_at: z.string(),
});
const ContactParams = z.object({
  id: z.string().min(1).max(128),
  contact: z.string().min(1).max(254).meta({ description: 'The contact’s id (con_…) or its email.' }),
});
const ImportReport = z.object({
  added: z.number().int(),
  updated: z
    .number()
    .int()
    .meta({ description: 'Rows whose email was a contact already: given fields replaced, data merged key by key.' }),
  refused_count: z.number().int().meta({ description: 'Every row refused.' }),
  refused: z
    .array(
      z.object({ row: z.number().int().meta({ description: 'The header is row 1.' }), email: z.string(), reason: z.string() }),
    )
    .meta({ description: 'The first 100 rows refused, with why.' }),
});
const CsvBody = documentationOnly(
  z.string().meta({
    description:
      'text/csv, a header row first: email (required), name, unsubscribed (true/false), and any other column, which goes into data.',
  }),
);

const TAGS = ['Audiences'];

const audienceView = ({ tenant_id: _, ...a }: Audience) => a;
const contactView = ({ tenant_id: _, ...c }: Contact) => c;

/** The address of a contact as given: alone, valid, normalized. */
export function contactEmail(email: string): string {
  const address = normalizeAddress(email);
  if (!isValidAddress(address)) throw invalid([{ field: 'email', message: 'not a valid email address' }]);
  return address;
}

export function audienceRoutes(app: ZodApp, catalog: Catalog, triggers: AutomationTriggers): void {
  const noAudience = (id: string) => new GatepostError('not_found', `No audience has the id "${id}".`);
  const noContact = (contact: string) => new GatepostError('not_found', `The audience has no contact "${contact}".`);
  /** The tenant's audience, or a 404. */
  const audienceOf = async (tenantId: string, id: string) => {
    const audience = await catalog.getAudience(tenantId, id);
    if (!audience) throw noAudience(id);
    return audience;
  };

  // A CSV import's body is handed to its handler as the request stream, read as it arrives.
  app.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));

  app.post(
    '/v1/audiences',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Create an audience',
        body: AudienceCreate,
        response: { 201: answer('The audience.', AudienceView), 400: refusal('Invalid fields.') },
      },
    },
    async (request, reply) => {
      const audience = await catalog.createAudience({
        id: newId('aud'),
        tenant_id: senderOf(request).tenant.id,
        name: request.body.name,
      });
      return reply.code(201).send(audienceView(audience));
    },
  );
  app.get(
    '/v1/audiences',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'List audiences',
        response: { 200: answer('Every audience of the tenant, oldest first.', listOf(AudienceView)) },
      },
    },
    async (request, reply) =>
      reply.code(200).send({ data: (await catalog.listAudiences(senderOf(request).tenant.id)).map(audienceView) }),
  );
  app.get(
    '/v1/audiences/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get an audience',
        params: IdParam,
        response: { 200: answer('The audience.', AudienceView), 404: refusal('No such audience.') },
      },
    },
    async (request, reply) =>
      reply.code(200).send(audienceView(await audienceOf(senderOf(request).tenant.id, request.params.id))),
  );
  app.delete(
    '/v1/audiences/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Delete an audience and its contacts',
        params: IdParam,
        response: { 204: answer('Deleted.'), 404: refusal('No such audience.') },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await catalog.deleteAudience(senderOf(request).tenant.id, id))) throw noAudience(id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/audiences/:id/contacts',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Add a contact',
        params: IdParam,
        body: ContactCreate,
        response: {
          201: answer('The contact.', ContactView),
          400: refusal('Invalid fields.'),
          404: refusal('No such audience.'),
          409: refusal('The audience has a contact with this email (contact_exists).'),
        },
      },
    },
    async (request, reply) => {
      const tenantId = senderOf(request).tenant.id;
      const { body } = request;
      const email = contactEmail(body.email);
      const audience = await audienceOf(tenantId, request.params.id);
      const contact = await catalog.createContact({
        id: newId('con'),
        tenant_id: tenantId,
        audience_id: audience.id,
        email,
        name: body.name ?? null,
        data: body.data ?? {},
        unsubscribed: body.unsubscribed ?? false,
      });
      await triggers.contactsAdded(tenantId, audience.id, [contact]);
      return reply.code(201).send(contactView(contact));
    },
  );
  app.get(
    '/v1/audiences/:id/contacts',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'List contacts',
        params: IdParam,
        querystring: PageQuery,
        response: {
          200: answer('A page of the audience’s contacts, by id.', pageOf(ContactView)),
          400: refusal('An unrecognised cursor.'),
          404: refusal('No such audience.'),
        },
      },
    },
    async (request, reply) => {
      const tenantId = senderOf(request).tenant.id;
      const audience = await audienceOf(tenantId, request.params.id);
      const page = await catalog.listContacts(tenantId, audience.id, request.query);
      return reply.code(200).send({ data: page.data.map(contactView), next_cursor: page.next_cursor });
    },
  );
  app.get(
    '/v1/audiences/:id/contacts/:contact',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Get a contact by id or email',
        params: ContactParams,
        response: { 200: answer('The contact.', ContactView), 404: refusal('No such audience or contact.') },
      },
    },
    async (request, reply) => {
      const { id, contact } = request.params;
      const found = await catalog.getContact(senderOf(request).tenant.id, id, contact);
      if (!found) throw noContact(contact);
      return reply.code(200).send(contactView(found));
    },
  );
  app.patch(
    '/v1/audiences/:id/contacts/:contact',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Update a contact',
        params: ContactParams,
        body: ContactUpdate,
        response: {
          200: answer('The updated contact.', ContactView),
          400: refusal('Invalid fields.'),
          404: refusal('No such audience or contact.'),
          409: refusal('The new email is another contact’s (contact_exists).'),
        },
      },
    },
    async (request, reply) => {
      const tenantId = senderOf(request).tenant.id;
      const { id, contact } = request.params;
      const { email, ...rest } = request.body;
      const found = await catalog.getContact(tenantId, id, contact);
      if (!found) throw noContact(contact);
      const updated = await catalog.updateContact(tenantId, id, found.id, {
        ...rest,
        ...(email === undefined ? {} : { email: contactEmail(email) }),
      });
      if (!updated) throw noContact(contact);
      return reply.code(200).send(contactView(updated));
    },
  );
  app.delete(
    '/v1/audiences/:id/contacts/:contact',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Remove a contact',
        params: ContactParams,
        response: { 204: answer('Removed.'), 404: refusal('No such audience or contact.') },
      },
    },
    async (request, reply) => {
      const tenantId = senderOf(request).tenant.id;
      const { id, contact } = request.params;
      const found = await catalog.getContact(tenantId, id, contact);
      if (!found || !(await catalog.deleteContact(tenantId, id, found.id))) throw noContact(contact);
      return reply.code(204).send();
    },
  );
  app.post(
    '/v1/audiences/:id/contacts/import',
    {
      config: { access: 'manage' },
      schema: {
        tags: TAGS,
        summary: 'Import contacts from a CSV file',
        description:
          'Streams the file in: a row whose email is a contact already updates it, one with a bad address or an email met before in the file is refused on its own; a file that cannot be read is refused whole (csv_invalid) and nothing is imported.',
        consumes: ['text/csv'],
        params: IdParam,
        body: CsvBody,
        response: {
          200: answer('What the import did.', ImportReport),
          400: refusal('Not text/csv.'),
          404: refusal('No such audience.'),
          422: refusal('The file cannot be read (csv_invalid); nothing was imported.'),
        },
      },
    },
    async (request, reply) => {
      const tenantId = senderOf(request).tenant.id;
      const body: unknown = request.body;
      // Any other content type was parsed by its own parser, and is not a file.
      if (!(body instanceof Readable)) throw new GatepostError('invalid_request', 'Send the file with Content-Type: text/csv.');
      const audience = await audienceOf(tenantId, request.params.id).catch((error: unknown) => {
        body.resume();
        throw error;
      });
      const report = await importContacts(catalog, tenantId, audience.id, body, {
        hooks: { added: (contacts) => triggers.contactsAdded(tenantId, audience.id, contacts) },
      });
      return reply.code(200).send(report);
    },
  );
}
