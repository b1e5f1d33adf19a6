// gatepost webhooks list | create | delete: the endpoints lifecycle events are pushed to.
import type { Command } from 'commander';
import type { WebhookEventType } from '../../sdk/node/index.ts';
import { clientOf, print, table } from '../context.ts';

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').filter(Boolean)];

export function webhookCommands(root: Command): void {
  const webhooks = root.command('webhooks').description('Webhook endpoints: signed deliveries of lifecycle events');
  webhooks
    .command('list')
    .description("The tenant's endpoints")
    .action(async (_opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).webhooks.list(), (list) =>
        list.length
          ? table([['ID', 'ENABLED', 'EVENTS', 'URL'], ...list.map((w) => [w.id, String(w.enabled), w.events.join(','), w.url])])
          : 'no webhook endpoints',
      );
    });
  webhooks
    .command('create')
    .description('Subscribe an https URL to event types; prints its signing secret, shown this once')
    .argument('<url>', 'the receiver, https')
    .requiredOption('--event <type>', 'an event type, e.g. email.sent (repeatable, or comma-separated)', collect)
    .action(async (url: string, opts: { event: string[] }, cmd: Command) => {
      const w = await clientOf(cmd).webhooks.create({ url, events: opts.event as WebhookEventType[] });
      print(cmd, w, (x) => [`created ${x.id} for ${x.events.join(', ')}`, `signing secret (shown this once): ${x.secret}`]);
    });
  webhooks
    .command('delete')
    .description('Delete an endpoint: nothing more is delivered to it')
    .argument('<id>', 'the endpoint id, whk_…')
    .action(async (id: string, _opts, cmd: Command) => {
      await clientOf(cmd).webhooks.delete(id);
      print(cmd, { id, deleted: true }, (x) => `deleted ${x.id}`);
    });
}
