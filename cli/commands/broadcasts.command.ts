// gatepost broadcasts create | send | cancel | list | get | delete: one message to each contact
// of an audience, from a template or an html file (docs/broadcasts.md).
import type { Command } from 'commander';
import type { Broadcast, BroadcastFields } from '../../sdk/node/index.ts';
import { clientOf, print, table, UsageError } from '../context.ts';
import { jsonObject, readText } from '../input.ts';

/** The broadcast, its fan-out's progress and its messages' results, as a person reads them. */
function broadcastLines(b: Broadcast): string[] {
  const lines = [
    `${b.id}  ${b.status}${b.send_at ? ` (at ${b.send_at})` : ''}  ${b.name}`,
    `audience: ${b.audience_id}`,
    `from:     ${b.from}`,
    `content:  ${b.template ? `template ${b.template}` : `subject ${JSON.stringify(b.subject)}`}${b.sandbox ? ' (sandbox)' : ''}`,
  ];
  if (b.paused) lines.push(`paused:   ${b.paused.reason} (until ${b.paused.until})`);
  if (b.progress) {
    const { admitted, refused } = b.progress;
    lines.push(
      `progress: ${admitted} admitted; refused ${refused.suppressed} suppressed, ${refused.unsubscribed} unsubscribed, ${refused.other} other`,
    );
  }
  if (b.results) {
    const r = b.results;
    lines.push(
      `results:  ${r.sent} sent, ${r.bounced} bounced, ${r.opened} opened, ${r.clicked} clicked, ${r.unsubscribed} unsubscribed, ${r.complained} complained`,
    );
  }
  return lines;
}

interface CreateOptions {
  name: string;
  audience: string;
  from: string;
  template?: string;
  html?: string;
  text?: string;
  subject?: string;
  data?: string;
  sandbox?: boolean;
}

/** The draft the flags describe: a template or an html file, one of the two (the server checks the rest). */
function fieldsOf(opts: CreateOptions): BroadcastFields {
  if ((opts.template === undefined) === (opts.html === undefined))
    throw new UsageError('give --template <slug> or --html <file>, one of the two');
  return {
    name: opts.name,
    audience_id: opts.audience,
    from: opts.from,
    ...(opts.template !== undefined ? { template: opts.template } : { html: readText(opts.html!) }),
    ...(opts.text !== undefined ? { text: readText(opts.text) } : {}),
    ...(opts.subject !== undefined ? { subject: opts.subject } : {}),
    ...(opts.data !== undefined ? { data: jsonObject(opts.data, '--data') } : {}),
    ...(opts.sandbox ? { sandbox: true } : {}),
  };
}

export function broadcastCommands(root: Command): void {
  const broadcasts = root.command('broadcasts').description('Broadcasts: one message to each contact of an audience');
  broadcasts
    .command('create')
    .description('Draft a broadcast to an audience, from a template or an html file; prints it (send it with `broadcasts send`)')
    .requiredOption('--name <name>', 'what to call it')
    .requiredOption('--audience <id>', 'the audience, aud_…')
    .requiredOption('--from <mailbox>', 'the sender, e.g. "Shop <news@shop.example>"')
    .option('--template <slug>', 'a template of the tenant (read when the broadcast is sent)')
    .option('--html <file>', 'a file of the html, with {{merge}} variables')
    .option('--text <file>', 'a file of the text part')
    .option('--subject <subject>', 'the subject (required with --html; replaces the template’s)')
    .option('--data <json>', 'merge variables of every message, a JSON object (each contact’s own win)')
    .option('--sandbox', 'capture every message in the sandbox inbox instead of delivering it')
    .action(async (opts: CreateOptions, cmd: Command) => {
      const fields = fieldsOf(opts);
      print(cmd, await clientOf(cmd).broadcasts.create(fields), broadcastLines);
    });
  broadcasts
    .command('send')
    .description('Send a draft now, or at a time (--at)')
    .argument('<id>', 'the broadcast id, bro_…')
    .option('--at <time>', 'an ISO 8601 time, at most 30 days ahead')
    .action(async (id: string, opts: { at?: string }, cmd: Command) => {
      print(cmd, await clientOf(cmd).broadcasts.send(id, opts.at), broadcastLines);
    });
  broadcasts
    .command('cancel')
    .description('Stop a scheduled, sending or paused broadcast: nobody not yet admitted is sent to')
    .argument('<id>', 'the broadcast id, bro_…')
    .action(async (id: string, _opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).broadcasts.cancel(id), broadcastLines);
    });
  broadcasts
    .command('list')
    .description('Broadcasts, newest first')
    .option('--limit <n>', 'how many (at most 1000)', (v) => Number(v), 20)
    .action(async (opts: { limit: number }, cmd: Command) => {
      const page = await clientOf(cmd).broadcasts.list({ limit: opts.limit });
      print(cmd, page.data, (list) =>
        list.length
          ? table([
              ['ID', 'STATUS', 'CREATED', 'AUDIENCE', 'NAME'],
              ...list.map((b) => [b.id, b.status, b.created_at, b.audience_id, b.name]),
            ])
          : 'no broadcasts',
      );
    });
  broadcasts
    .command('get')
    .description('A broadcast, with its progress and results')
    .argument('<id>', 'the broadcast id, bro_…')
    .action(async (id: string, _opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).broadcasts.get(id), broadcastLines);
    });
  broadcasts
    .command('delete')
    .description('Delete a draft')
    .argument('<id>', 'the broadcast id, bro_…')
    .action(async (id: string, _opts, cmd: Command) => {
      await clientOf(cmd).broadcasts.delete(id);
      print(cmd, { id, deleted: true }, (x) => `deleted ${x.id}`);
    });
}
