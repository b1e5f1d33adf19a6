// SMTP submission (GATEPOST_SMTP_PORT): smtp-server with STARTTLS, AUTH PLAIN and LOGIN, SIZE
// and PIPELINING. The hooks stay thin: each calls a function of submission.session.ts and hands
// the reply it answers to smtp-server.
import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { GatepostError } from '../../errors/errors.catalog.ts';
import type { Sender } from '../../gate/gate.ts';
import type { Envelope } from './submission.drafts.ts';
import { replies, replyFor, replyLine, type SmtpReply } from './submission.replies.ts';
import { authenticate, authOffered, checkRecipient, MAX_DATA_BYTES, submit, type SubmissionDeps } from './submission.session.ts';
import type { TlsIdentity } from './submission.tls.ts';
import { AuthThrottle } from './submission.throttle.ts';
import type { SmtpLimits } from '../../config/config.ts';
import { workerParser } from './submission.parser.ts';
import { MessagesUnderWay, smtpListener, type SmtpListener } from './smtp.listener.ts';

export type SubmissionServer = SmtpListener;

/** smtp-server's error shape: `responseCode` becomes the reply code. */
const asError = (reply: SmtpReply) => Object.assign(new Error(replyLine(reply)), { responseCode: reply.code });

// After AUTH, smtp-server keeps what onAuth answered as the session's user.
const senderOf = (session: SMTPServerSession) => session.user as Sender;

const envelopeOf = (session: SMTPServerSession): Envelope => ({
  mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address || null : null,
  rcptTo: session.envelope.rcptTo.map((r) => r.address),
});

/** The whole DATA, kept up to the limit; past it, only counted, so a huge message costs no memory. */
async function receive(stream: SMTPServerDataStream): Promise<{ raw: Buffer; oversized: boolean }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes <= MAX_DATA_BYTES) chunks.push(chunk);
  }
  return { raw: Buffer.concat(chunks), oversized: stream.sizeExceeded };
}

/**
 * Replies to pipelined commands go out together. A client that pipelines (RFC 2920) sends MAIL,
 * RCPT and DATA at once and waits for all three replies; smtp-server writes each on its own. The
 * socket is corked while a chunk of commands is handled and uncorked once the event loop has run
 * what that chunk started, so the three replies are one write, not three. A reply that takes
 * longer (a check that waits on a database) goes out when it is ready.
 */
function coalesceReplies(socket: Socket): void {
  let corked = false;
  // Before smtp-server's own listener, which handles the chunk (and replies) synchronously.
  socket.prependListener('data', () => {
    if (corked) return;
    corked = true;
    socket.cork();
    setImmediate(() => {
      corked = false;
      socket.uncork();
    });
  });
}

export function submissionServer(
  given: Omit<SubmissionDeps, 'throttle'> & { tls: TlsIdentity; hostname: string; limits: SmtpLimits },
): SubmissionServer {
  const parser = given.parser ?? workerParser();
  const deps = { ...given, parser, throttle: new AuthThrottle(given.limits) };
  const underWay = new MessagesUnderWay();
  const server = new SMTPServer({
    name: deps.hostname,
    banner: 'Gatepost SMTP submission',
    key: deps.tls.key,
    cert: deps.tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // Allowed by smtp-server so that loopback clients may AUTH without TLS; to anyone else AUTH
    // is neither advertised nor accepted until STARTTLS (onConnect, onSecure).
    allowInsecureAuth: true,
    authRequiredMessage: replyLine(replyFor(new GatepostError('missing_api_key'))),
    size: MAX_DATA_BYTES,
    maxClients: deps.limits.maxClients,
    socketTimeout: deps.limits.idleTimeoutMs,
    logger: false,
    onConnect(session, callback) {
      const throttled = deps.throttle.refusal(session.remoteAddress);
      if (throttled) return callback(asError(throttled));
      // A session-wide list replaces the server's: without AUTH, EHLO does not list it and the
      // command is unknown, so a client cannot send its key before STARTTLS.
      if (!authOffered(session)) session.disabledCommands = ['AUTH'];
      callback();
    },
    onSecure(_socket, session, callback) {
      session.disabledCommands = undefined;
      callback();
    },
    onAuth(auth, session, callback) {
      authenticate(deps, { password: auth.password, session, remoteAddress: session.remoteAddress }).then(
        (answer) => ('sender' in answer ? callback(null, { user: answer.sender }) : callback(asError(answer.reply))),
        callback,
      );
    },
    // smtp-server asks for AUTH before MAIL only where AUTH is offered; elsewhere it is this hook
    // that refuses. Nothing else to check before the recipients and the message (smtp-server's
    // default answers a loop turn later, which splits a pipelined MAIL, RCPT and DATA apart).
    onMailFrom(_address, session, callback) {
      callback(session.user ? undefined : asError(replies.tlsFirst));
    },
    onRcptTo(address, session, callback) {
      checkRecipient(deps, senderOf(session), address.address, session.envelope.rcptTo.length).then(
        (reply) => callback(reply ? asError(reply) : undefined),
        callback,
      );
    },
    onData(stream, session, callback) {
      underWay.track(
        receive(stream)
          .then((data) => submit(deps, { sender: senderOf(session), envelope: envelopeOf(session), id: session.id }, data))
          .then((reply) => (reply.code < 400 ? callback(null, replyLine(reply)) : callback(asError(reply))), callback),
      );
    },
  });
  server.server.on('connection', coalesceReplies);
  const listener = smtpListener(server, underWay, { name: 'SMTP submission', log: deps.log });
  return {
    listen: listener.listen,
    async drain() {
      await listener.drain();
      await parser.close();
    },
  };
}
