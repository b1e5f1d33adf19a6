// gatepost suppressions list | add | remove: the addresses the tenant will not send to.
import type { Command } from 'commander';
import type { Suppression } from '../../sdk/node/index.ts';
import { clientOf, print, table } from '../context.ts';

const rows = (list: Suppression[]) =>
  table([['ADDRESS', 'REASON', 'SINCE'], ...list.map((s) => [s.address, s.reason, s.created_at])]);

export function suppressionCommands(root: Command): void {
  const suppressions = root.command('suppressions').description('The suppression list: addresses never sent to');
  suppressions
    .command('list')
    .description('Suppressed addresses, by address (every page)')
    .action(async (_opts, cmd: Command) => {
      const client = clientOf(cmd);
      const all: Suppression[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.suppressions.list({ limit: 1000, cursor });
        all.push(...page.data);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      print(cmd, all, (list) => (list.length ? rows(list) : 'no suppressed addresses'));
    });
  suppressions
    .command('add')
    .description('Suppress an address')
    .argument('<address>', 'the address')
    .option('--reason <reason>', 'manual (default), unsubscribe or complaint')
    .option('--detail <text>', 'a note kept with it')
    .action(async (address: string, opts: { reason?: 'manual' | 'unsubscribe' | 'complaint'; detail?: string }, cmd: Command) => {
      const s = await clientOf(cmd).suppressions.add({ address, reason: opts.reason, detail: opts.detail });
      print(cmd, s, (x) => `suppressed ${x.address} (${x.reason})`);
    });
  suppressions
    .command('remove')
    .description('Take an address off the list')
    .argument('<address>', 'the address')
    .action(async (address: string, _opts, cmd: Command) => {
      await clientOf(cmd).suppressions.remove(address);
      print(cmd, { address, removed: true }, (x) => `removed ${x.address}`);
    });
}
