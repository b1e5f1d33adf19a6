// gatepost inbox [list] | show: what sandbox keys sent, captured instead of delivered.
import type { Command } from 'commander';
import { clientOf, print, table } from '../context.ts';

export function inboxCommands(root: Command): void {
  const inbox = root.command('inbox').description('The capture inbox: messages sandbox keys sent, rendered, never delivered');
  inbox
    .command('list', { isDefault: true })
    .description('Captured messages, newest first')
    .option('--limit <n>', 'how many (at most 1000)', (v) => Number(v), 20)
    .action(async (opts: { limit: number }, cmd: Command) => {
      const page = await clientOf(cmd).sandbox.list({ limit: opts.limit });
      print(cmd, page.data, (list) =>
        list.length
          ? table([['MESSAGE', 'CAPTURED', 'TO', 'SUBJECT'], ...list.map((c) => [c.message_id, c.captured_at, c.to, c.subject])])
          : 'the inbox is empty',
      );
    });
  inbox
    .command('show')
    .description('One captured message: its headers and text')
    .argument('<id>', 'the message id, msg_…')
    .option('--html', 'print the html instead of the text')
    .action(async (id: string, opts: { html?: boolean }, cmd: Command) => {
      print(cmd, await clientOf(cmd).sandbox.get(id), (c) => [
        `from:     ${c.from}`,
        `to:       ${c.to}`,
        `subject:  ${c.subject}`,
        `captured: ${c.captured_at}`,
        '',
        opts.html ? c.html : c.text,
      ]);
    });
}
