// The outbound SMTP relay, a smarthost (GATEPOST_SMTP_RELAY): one pooled nodemailer transport
// that hands every message to the same server. Its answer becomes a DeliveryReport, as direct
// delivery's does: accepted, refused for good (5xx) or for now (4xx, no answer).
import nodemailer from 'nodemailer';
import { acceptance, parseReply, refusedRecipients, stageOf, type Transport } from './transport.ts';

/** `url` as nodemailer takes it: smtp://user:pass@host:port (smtps:// for implicit TLS). */
export function smtpRelay(url: string): Transport {
  const transport = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: 8,
    maxMessages: 1000,
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  } as never);
  // The relay is the host that answers. Its address and the TLS of nodemailer's pooled sockets
  // are not exposed by the transport, so they are reported as unknown (null).
  const relayHost = new URL(url).hostname;
  const base = { mx: relayHost, ip: null, tls: null };
  return {
    // The relay takes every recipient, whatever their domains, in one transaction: one copy.
    transactions: (recipients) => [recipients],
    async send({ from, to, raw }) {
      const connected_at = new Date().toISOString();
      try {
        const info = await transport.sendMail({ envelope: { from, to }, raw });
        return { ...base, connected_at, ...acceptance(info) };
      } catch (error) {
        const e = error as { responseCode?: number; response?: string; command?: string; message: string };
        const reply = e.response ? parseReply(e.response) : { code: null, enhanced: null, text: e.message };
        const result = e.responseCode && e.responseCode >= 500 ? 'permanent' : 'transient';
        // Every recipient refused at RCPT TO: each has its own answer.
        const refused = refusedRecipients(e);
        return {
          ...base,
          result,
          reply,
          stage: stageOf(e.command),
          connected_at: null,
          accepted_at: null,
          ...(refused.length > 0 ? { refused } : {}),
        };
      }
    },
    async close() {
      transport.close();
    },
  };
}
