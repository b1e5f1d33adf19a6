// POST /v1/validate and POST /v1/validate/batch: address validation before a send
// (mail/validate.ts; docs/validate.md). Any key that may send may validate; a public key may
// not, as it sits in a web page, where it would let anyone read the tenant's suppression list
// one address at a time and spend the server's DNS look-ups.
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Gate, Sender } from '../../gate/gate.ts';
import { validateAddress, type MailHost, type ValidationLookups } from '../../mail/validate.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { ValidateBatchRequest, ValidateBatchResponse, ValidateRequest, ValidationView } from './schemas.ts';

/** Where a domain's mail goes: the composition gives mta/'s cached MX look-up (mta/mx.host.ts). */
export type MailHostLookup = (asciiDomain: string) => Promise<MailHost>;

function lookupsFor(gate: Gate, mailHost: MailHostLookup, sender: Sender): ValidationLookups {
  return {
    mailHost,
    // The gate's own read-ahead check: the catalog's list, confirmed by the recipient's actor on a hit.
    async suppressed(address) {
      try {
        await gate.checkRecipient(sender, address);
        return false;
      } catch (error) {
        if (error instanceof GatepostError && error.code === 'recipient_suppressed') return true;
        throw error;
      }
    },
  };
}

export function validateRoutes(app: ZodApp, gate: Gate, mailHost: MailHostLookup): void {
  app.post(
    '/v1/validate',
    {
      config: { access: 'send' },
      schema: {
        tags: ['Validation'],
        summary: 'Validate an address before sending to it',
        body: ValidateRequest,
        response: {
          200: answer(
            'The verdict, why, and each check (docs/validate.md). An invalid address is a verdict, not an error.',
            ValidationView,
          ),
          400: refusal('The body is not {"address": "<text of at most 1024 characters>"}.'),
        },
      },
    },
    async (request, reply) => {
      const lookups = lookupsFor(gate, mailHost, senderOf(request));
      return reply.code(200).send(await validateAddress(request.body.address, lookups));
    },
  );
  app.post(
    '/v1/validate/batch',
    {
      config: { access: 'send' },
      schema: {
        tags: ['Validation'],
        summary: 'Validate up to 1,000 addresses',
        body: ValidateBatchRequest,
        response: {
          200: answer('One verdict per address, in order.', ValidateBatchResponse),
          400: refusal('Not {"addresses": [...]} of 1 to 1,000 strings.'),
        },
      },
    },
    async (request, reply) => {
      const lookups = lookupsFor(gate, mailHost, senderOf(request));
      const results = await Promise.all(request.body.addresses.map((address) => validateAddress(address, lookups)));
      return reply.code(200).send({ results });
    },
  );
}
