// gatepost send: one email, from flags (or a template), with the answer's id.
import type { Command } from 'commander';
import type { SendRequest } from '../../sdk/node/index.ts';
import { clientOf, print, UsageError } from '../context.ts';
import { jsonObject, readText } from '../input.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function sendCommand(root: Command): void {
  root
    .command('send')
    .description('Send one email (with a sandbox key, it is captured: see `gatepost inbox`)')
    .option('--to <address>', 'the recipient')
    .option('--from <address>', "the sender (default: the template's, then the tenant's)")
    .option('--subject <text>', 'the subject; may hold {{placeholders}}')
    .option('--html <html>', 'the HTML body')
    .option('--html-file <path>', 'the HTML body, from a file')
    .option('--text <text>', 'the plain-text body (default: made from the html)')
    .option('--template <slug>', "a stored template's slug, instead of subject and html")
    .option('--data <json>', 'merge variables, a JSON object')
    .option('--reply-to <address>', 'the Reply-To address')
    .option('--send-at <time>', 'schedule it: an ISO 8601 time, at most 30 days ahead')
    .option('--stream <stream>', 'transactional (default) or broadcast')
    .option('--tag <tag>', 'a tag (repeatable)', collect)
    .option('--idempotency-key <key>', 'makes a retry of this command safe (default: one made for this call)')
    .action(async (opts, cmd: Command) => {
      if (opts.html !== undefined && opts.htmlFile !== undefined) throw new UsageError('give --html or --html-file, not both');
      const req: SendRequest = {
        to: opts.to,
        from: opts.from,
        subject: opts.subject,
        html: opts.htmlFile !== undefined ? readText(opts.htmlFile) : opts.html,
        text: opts.text,
        template: opts.template,
        data: opts.data !== undefined ? jsonObject(opts.data, '--data') : undefined,
        reply_to: opts.replyTo,
        send_at: opts.sendAt,
        stream: opts.stream,
        tags: opts.tag,
        idempotency_key: opts.idempotencyKey,
      };
      const sent = await clientOf(cmd).send(req);
      print(
        cmd,
        sent,
        (s) =>
          `${s.id} ${s.status}${s.sandbox ? ' (sandbox: captured)' : ''}${s.replayed ? ' (replayed: sent before with this key)' : ''}`,
      );
    });
}
