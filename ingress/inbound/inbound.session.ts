// What the inbound MX answers, as plain functions its thin smtp-server hooks call
// (inbound.smtp.ts): a recipient is accepted when a route covers it or it is on a return-path
// domain; a received message is checked and parsed once, on the reader's thread (inbound.reader.ts),
// kept in the catalog per route, and posted as email.inbound through the webhook actors, the path
// every webhook takes (signed, retried, logged); mail for a return-path address goes to the
// ReportIntake, but for its unsubscribe addresses (`u+<token>@`, List-Unsubscribe's mailto), whose
// token is checked at RCPT and unsubscribes as the one-click POST does. The 250 is answered only
// once all of that is durable.
import type { WebhookDeliveries } from '../../gate/webhooks.ts';
import { newId } from '../../lib/ids.ts';
import type { Catalog, InboundRoute } from '../../store/catalog.port.ts';
import type { InboundRoutes } from '../../tenancy/inbound.routes.ts';
import { unsubscribeTokenOf } from '../../mail/tracking.token.ts';
import { inboundLinks } from './inbound.payload.ts';
import type { InboundReader } from './inbound.reader.ts';
import type { ReportIntake } from './report.intake.ts';

export interface SmtpReply {
  code: number;
  enhanced: string;
  text: string;
}

export const replies = {
  relayDenied: { code: 550, enhanced: '5.7.1', text: 'Relaying denied: Gatepost receives no mail for this domain.' },
  unknownUser: { code: 550, enhanced: '5.1.1', text: 'No such recipient here.' },
  badAddress: { code: 501, enhanced: '5.1.3', text: 'The recipient address is not valid.' },
  tooLarge: (max: number) => ({ code: 552, enhanced: '5.3.4', text: `The message is larger than ${max} bytes.` }),
  tooManyRecipients: { code: 452, enhanced: '4.5.3', text: 'Too many recipients; send the rest in another transaction.' },
  failed: { code: 451, enhanced: '4.3.0', text: 'The message could not be kept; try again later.' },
  accepted: (id: string) => ({ code: 250, enhanced: '2.0.0', text: `Accepted (${id})` }),
} satisfies Record<string, SmtpReply | ((...args: never[]) => SmtpReply)>;

/** RFC 5321 §4.5.3.1.8: at least 100 recipients must be taken; more in one transaction is not owed. */
export const MAX_RECIPIENTS = 100;

/** What becomes of mail for one accepted recipient. */
export type Target =
  { kind: 'route'; route: InboundRoute } | { kind: 'report'; tenant_id: string } | { kind: 'unsubscribe'; token: string };

/** The List-Unsubscribe mailto addresses' tokens (gate/tracking.ts). */
export interface Unsubscribes {
  /** Whether the token is a signed unsubscribe token of its message. */
  isToken(token: string): Promise<boolean>;
  /** Unsubscribes as the one-click POST does (a repeat changes nothing). */
  unsubscribe(token: string): Promise<void>;
}

export interface InboundDeps {
  routes: InboundRoutes;
  catalog: Catalog;
  webhooks: WebhookDeliveries;
  intake: ReportIntake;
  unsubscribes: Unsubscribes;
  /** Checks and parses each message (inbound.reader.ts), looking records up through GATEPOST_DNS_SERVERS. */
  reader: InboundReader;
  /** GATEPOST_HOSTNAME: our name in the verdicts' Authentication-Results. */
  hostname: string;
  /** GATEPOST_PUBLIC_URL, known once the API listens. */
  publicUrl: () => string;
  log: (message: string, error?: unknown) => void;
}

// An address as RFC 5321 lets it through MAIL/RCPT; smtp-server has checked the angle brackets.
const ADDRESS = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

/** The target of `address`, or the refusal to answer at RCPT. */
export async function checkRecipient(
  deps: Pick<InboundDeps, 'routes' | 'unsubscribes'>,
  address: string,
  already: number,
): Promise<{ target: Target } | { reply: SmtpReply }> {
  if (already >= MAX_RECIPIENTS) return { reply: replies.tooManyRecipients };
  if (!ADDRESS.test(address)) return { reply: replies.badAddress };
  const answer = await deps.routes.recipient(address);
  switch (answer.kind) {
    case 'route':
      return { target: { kind: 'route', route: answer.route } };
    case 'report': {
      const token = unsubscribeTokenOf(address.slice(0, address.lastIndexOf('@')));
      if (token === null) return { target: { kind: 'report', tenant_id: answer.tenant_id } };
      // A tampered or unknown token is no address here, refused before any data is taken.
      return (await deps.unsubscribes.isToken(token))
        ? { target: { kind: 'unsubscribe', token } }
        : { reply: replies.unknownUser };
    }
    case 'unknown_user':
      return { reply: replies.unknownUser };
    case 'relay':
      return { reply: replies.relayDenied };
  }
}

export interface Received {
  raw: Buffer;
  recipients: { address: string; target: Target }[];
  mailFrom: string;
  helo: string;
  remoteAddress: string;
}

/** Keeps and posts the message for every accepted recipient; the reply tells the client whether all of it is durable. */
export async function deliver(deps: InboundDeps, m: Received): Promise<SmtpReply> {
  const receivedAt = new Date().toISOString();
  const byRoute = new Map<string, { route: InboundRoute; rcpt: string[] }>();
  const reports: string[] = [];
  const unsubscribes: string[] = [];
  for (const { address, target } of m.recipients) {
    if (target.kind === 'report') reports.push(address);
    else if (target.kind === 'unsubscribe') unsubscribes.push(target.token);
    else {
      const entry = byRoute.get(target.route.id) ?? { route: target.route, rcpt: [] };
      entry.rcpt.push(address);
      byRoute.set(target.route.id, entry);
    }
  }
  const ids: string[] = [];
  // What the message says does not matter (RFC 2369 §3.2): mail to the address is the request.
  for (const token of unsubscribes) await deps.unsubscribes.unsubscribe(token);
  for (const rcpt of reports) {
    await deps.intake.take({ rcpt, mailFrom: m.mailFrom, raw: m.raw, remoteAddress: m.remoteAddress, receivedAt });
  }
  if (byRoute.size > 0) {
    const { payload, attachments } = await deps.reader.read(m.raw, {
      ip: m.remoteAddress,
      helo: m.helo,
      mailFrom: m.mailFrom,
      mta: deps.hostname,
    });
    for (const { route, rcpt } of byRoute.values()) {
      const id = newId('inm');
      ids.push(id);
      await deps.catalog.putInboundMessage({
        id,
        tenant_id: route.tenant_id,
        route_id: route.id,
        mail_from: m.mailFrom,
        rcpt_to: rcpt,
        remote_address: m.remoteAddress,
        received_at: receivedAt,
        payload,
        raw: m.raw,
        attachments,
      });
      if (route.action !== 'webhook') continue;
      const event = {
        id: newId('evt'),
        type: 'email.inbound',
        created_at: receivedAt,
        data: {
          id,
          route_id: route.id,
          envelope: { mail_from: m.mailFrom, rcpt_to: rcpt, remote_address: m.remoteAddress },
          ...payload,
          ...inboundLinks(deps.publicUrl(), id, payload),
          received_at: receivedAt,
        },
      };
      const endpoints = route.endpoint_id
        ? [route.endpoint_id]
        : (await deps.catalog.webhooksFor(route.tenant_id, 'email.inbound')).map((e) => e.id);
      for (const endpoint of endpoints) await deps.webhooks.enqueue(endpoint, route.tenant_id, event);
    }
  }
  return replies.accepted(ids.join(' ') || (reports.length > 0 ? 'report' : 'unsubscribed'));
}
