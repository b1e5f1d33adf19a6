// The inbound MX (GATEPOST_INBOUND_PORT): smtp-server with STARTTLS and SIZE, no AUTH. Hooks stay
// thin: RCPT asks inbound.session.ts's checkRecipient, DATA is spooled (inbound.spool.ts) and its
// bytes handed to deliver, which has them read on the reader's thread (inbound.reader.ts).
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { MessagesUnderWay, smtpListener, type SmtpListener } from '../smtp/smtp.listener.ts';
import type { TlsIdentity } from '../smtp/submission.tls.ts';
import { checkRecipient, deliver, replies, type InboundDeps, type SmtpReply, type Target } from './inbound.session.ts';
import { threadReader } from './inbound.reader.ts';
import { spool } from './inbound.spool.ts';

export type InboundServer = SmtpListener;

const asError = (reply: SmtpReply) => Object.assign(new Error(`${reply.enhanced} ${reply.text}`), { responseCode: reply.code });

/** `::ffff:127.0.0.1` is 127.0.0.1 to SPF. */
const plainAddress = (address: string) => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

export function inboundServer(
  given: Omit<InboundDeps, 'reader'> & {
    /** GATEPOST_DNS_SERVERS, where the verdicts' records are looked up (the system's when null). */
    dnsServers: readonly string[] | null;
    tls: TlsIdentity;
    maxBytes: number;
    spoolDir: string;
    maxClients: number;
    idleTimeoutMs: number;
  },
): InboundServer {
  const deps = { ...given, reader: threadReader(given.dnsServers) };
  // The accepted recipients of each session's current transaction, with what becomes of their mail.
  const targets = new WeakMap<SMTPServerSession, { address: string; target: Target }[]>();
  const underWay = new MessagesUnderWay();
  const server = new SMTPServer({
    name: deps.hostname,
    banner: 'Gatepost inbound MX',
    key: deps.tls.key,
    cert: deps.tls.cert,
    disabledCommands: ['AUTH'],
    authOptional: true,
    size: deps.maxBytes,
    maxClients: deps.maxClients,
    socketTimeout: deps.idleTimeoutMs,
    logger: false,
    onMailFrom(_address, session, callback) {
      targets.set(session, []);
      callback();
    },
    onRcptTo(address, session, callback) {
      const accepted = targets.get(session) ?? [];
      checkRecipient(deps, address.address, accepted.length).then(
        (answer) => {
          if ('reply' in answer) return callback(asError(answer.reply));
          accepted.push({ address: address.address, target: answer.target });
          targets.set(session, accepted);
          callback();
        },
        // A look-up that failed (the catalog unreachable) is no verdict on the address: try again later.
        (error: unknown) => {
          deps.log('inbound recipient could not be checked', error);
          callback(asError(replies.failed));
        },
      );
    },
    onData(stream, session, callback) {
      const recipients = targets.get(session) ?? [];
      const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const answered = spool(deps.spoolDir, stream, deps.maxBytes)
        .then(async (file) => {
          if (file.oversized) return replies.tooLarge(deps.maxBytes);
          try {
            const raw = await file.read();
            return await deliver(deps, {
              raw,
              recipients,
              mailFrom,
              helo: session.hostNameAppearsAs || '',
              remoteAddress: plainAddress(session.remoteAddress),
            });
          } finally {
            await file.drop();
          }
        })
        .catch((error: unknown) => {
          deps.log('inbound message could not be kept', error);
          return replies.failed;
        })
        .then((reply) => (reply.code < 400 ? callback(null, `${reply.enhanced} ${reply.text}`) : callback(asError(reply))));
      underWay.track(answered);
    },
  });
  const listener = smtpListener(server, underWay, { name: 'inbound MX', log: deps.log });
  return {
    listen: listener.listen,
    async drain() {
      await listener.drain();
      await deps.reader.close();
    },
  };
}
