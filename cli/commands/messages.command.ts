// gatepost messages get | tail: a message and its timeline, once or as it grows.
import type { Command } from 'commander';
import type { Event, Message } from '../../sdk/node/index.ts';
import { clientOf, globals, print } from '../context.ts';

/** One line of a timeline: when, what, and the facts that matter most. */
export function eventLine(e: Event): string {
  const d = e.data as Record<string, unknown>;
  const facts = [
    d.domain && `domain=${d.domain}`,
    d.smtp_code != null && `smtp=${d.smtp_code}`,
    d.response && `"${String(d.response).slice(0, 80)}"`,
    d.bounce_type && `bounce=${d.bounce_type}`,
    d.retry_at && `retry_at=${d.retry_at}`,
    d.sandbox === true && 'sandbox',
  ].filter(Boolean);
  return `${e.created_at}  ${e.type.padEnd(17)} ${e.id}${facts.length ? `  ${facts.join(' ')}` : ''}`;
}

function messageLines(m: Message): string[] {
  return [
    `${m.id}  ${m.status}${m.sandbox ? ' (sandbox)' : ''}`,
    `from:     ${m.from}`,
    `to:       ${m.to}`,
    `subject:  ${m.subject}`,
    `created:  ${m.created_at}${m.send_at ? `  send_at: ${m.send_at}` : ''}`,
    '',
    ...m.events.map(eventLine),
  ];
}

export function messageCommands(root: Command): void {
  const messages = root.command('messages').description('Read a message and its timeline');
  messages
    .command('get')
    .description('A message, its status and every event of its timeline')
    .argument('<id>', 'the message id, msg_…')
    .action(async (id: string, _opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).messages.get(id), messageLines);
    });
  messages
    .command('tail')
    .description("Follow a message's timeline: each event as it comes, until the message is sent or bounced (or Ctrl-C)")
    .argument('<id>', 'the message id, msg_…')
    .option('--interval <ms>', 'how often to look, in milliseconds', (v) => Number(v), 1000)
    .action(async (id: string, opts: { interval: number }, cmd: Command) => {
      const client = clientOf(cmd);
      const stop = new AbortController();
      const interrupted = () => stop.abort();
      process.once('SIGINT', interrupted);
      try {
        for await (const event of client.messages.follow(id, { intervalMs: opts.interval, signal: stop.signal })) {
          process.stdout.write(globals(cmd).json ? `${JSON.stringify(event)}\n` : `${eventLine(event)}\n`);
        }
      } finally {
        process.off('SIGINT', interrupted);
      }
      // Ctrl-C before the message was done: the shell's convention for an interrupted command.
      if (stop.signal.aborted) process.exitCode = 130;
    });
}
