// The outbound SMTP relay (GATEPOST_SMTP_RELAY): one pooled nodemailer transport. The answer of
// the remote server becomes data: accepted, refused for good (5xx) or for now (4xx, no answer).
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';

export type RelayAnswer =
  | { kind: 'accepted'; code: number; response: string }
  | { kind: 'permanent'; code: number; response: string }
  | { kind: 'transient'; code: number | null; response: string };

export interface Relay {
  send(message: Mail.Options): Promise<RelayAnswer>;
  close(): void;
}

/** `url` as nodemailer takes it: smtp://user:pass@host:port (smtps:// for implicit TLS). */
export function smtpRelay(url: string): Relay {
  const transport = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: 8,
    maxMessages: 1000,
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  } as never);
  return {
    async send(message) {
      try {
        const info = await transport.sendMail(message);
        const code = Number(/^\d{3}/.exec(info.response)?.[0] ?? 250);
        return { kind: 'accepted', code, response: info.response };
      } catch (error) {
        const e = error as { responseCode?: number; response?: string; message: string };
        const response = e.response ?? e.message;
        if (e.responseCode && e.responseCode >= 500) return { kind: 'permanent', code: e.responseCode, response };
        return { kind: 'transient', code: e.responseCode ?? null, response };
      }
    },
    close: () => transport.close(),
  };
}
