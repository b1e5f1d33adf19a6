// Signed delivery receipts (docs/receipts.md): a message's receipt, to a key that may read the
// message; the public keys that verify receipts, open to anyone; and, for the operator, a new
// signing key.
import { z } from 'zod';
import { GatepostError } from '../../errors/errors.catalog.ts';
import { readMessage, type MessageStores } from '../../gate/messages.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, refusal, type ZodApp } from './schema.http.ts';
import { IdParam } from './schemas.ts';

/** The operator's receipt keys as the routes use them (mta/receipt.keys.ts's ReceiptKeys). */
export interface ReceiptKeyRing {
  jwks(): Promise<{ keys: Array<{ kid: string }> }>;
  rotate(): Promise<{ kid: string }>;
}

const Receipt = z.object({
  id: z.string().meta({ description: 'rcp_…' }),
  jws: z.string().meta({ description: 'The compact JWS (EdDSA over Ed25519, with kid); its payload is the receipt.' }),
});

const MessageReceipt = Receipt.extend({
  receipts: z.array(Receipt.extend({ domain: z.string().nullable() })).meta({
    description:
      'Every receipt of the message, oldest first: one per accepted transaction (a message with recipients on several domains has one per domain). id and jws are the latest.',
  }),
});

const Jwks = z.object({
  keys: z.array(z.looseObject({ kid: z.string(), kty: z.string(), crv: z.string(), x: z.string() })),
});

/** The receipts on a message's `email.sent` events, oldest first. */
function receiptsOf(events: Array<{ type: string; data: Record<string, unknown> }>) {
  return events.flatMap((e) => {
    const receipt = e.data.receipt as { id: string; jws: string } | undefined;
    if (e.type !== 'email.sent' || !receipt) return [];
    return [{ id: receipt.id, jws: receipt.jws, domain: (e.data.domain as string | undefined) ?? null }];
  });
}

/** GET /v1/messages/:id/receipt, on the keyed scope. */
export function receiptRoutes(app: ZodApp, stores: MessageStores): void {
  app.get(
    '/v1/messages/:id/receipt',
    {
      config: { access: 'read_messages' },
      schema: {
        tags: ['Messages'],
        summary: "Get a message's signed delivery receipt",
        params: IdParam,
        response: {
          200: answer('The latest receipt of the message, and all of them.', MessageReceipt),
          404: refusal(
            'not_found: no message with this id that the key may read; receipt_not_found: no server has accepted it yet.',
          ),
        },
      },
    },
    async (request, reply) => {
      const { params } = request;
      const { events } = await readMessage(stores, senderOf(request).key, params.id);
      const receipts = receiptsOf(events);
      const latest = receipts.at(-1);
      if (!latest) throw new GatepostError('receipt_not_found', `Message ${params.id} has no delivery receipt yet.`);
      return reply.code(200).send({ id: latest.id, jws: latest.jws, receipts });
    },
  );
}

/** GET /.well-known/jwks.json, on the open scope. */
export function jwksRoutes(app: ZodApp, keys: ReceiptKeyRing): void {
  app.get(
    '/.well-known/jwks.json',
    {
      config: { access: 'none' },
      schema: {
        tags: ['Receipts'],
        summary: 'The public keys that verify delivery receipts (JWK Set), current and retired',
        response: { 200: answer('The JWK Set, oldest key first.', Jwks) },
      },
    },
    async (_request, reply) => reply.code(200).send(await keys.jwks()),
  );
}

/** POST /v1/admin/receipt-keys/rotate, on the admin scope. */
export function receiptAdminRoutes(app: ZodApp, keys: ReceiptKeyRing): void {
  app.post(
    '/v1/admin/receipt-keys/rotate',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'Make a new receipt signing key current; the old one is retired and stays in the JWKS',
        response: { 200: answer("The new key's id.", z.object({ kid: z.string() })) },
      },
    },
    async (_request, reply) => reply.code(200).send({ kid: (await keys.rotate()).kid }),
  );
}
