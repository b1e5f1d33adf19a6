// gatepost domains create | list | show | verify | delete: sending domains and the DNS records
// to publish for them (docs/domains.md).
import type { Command } from 'commander';
import type { Domain } from '../../sdk/node/index.ts';
import { clientOf, print, table } from '../context.ts';

/** The domain and its records, as a person publishes them. */
function domainLines(d: Domain): string[] {
  return [
    `${d.id}  ${d.name}  ${d.status}${d.checked_at ? `  (checked ${d.checked_at})` : ''}`,
    '',
    ...table([
      ['PURPOSE', 'TYPE', 'NAME', 'STATUS', 'VALUE'],
      ...d.records.map((r) => [
        `${r.purpose}${r.required ? '' : ' (advised)'}`,
        r.type,
        r.name,
        r.status,
        r.priority !== undefined ? `${r.priority} ${r.value}` : r.value,
      ]),
    ]),
    ...d.records.filter((r) => r.error).map((r) => `${r.purpose} ${r.name}: ${r.error}`),
  ];
}

export function domainCommands(root: Command): void {
  const domains = root.command('domains').description('Sending domains: the DNS records to publish, and verifying them');
  domains
    .command('create')
    .description('Add a sending domain; prints the DNS records to publish')
    .argument('<name>', 'the domain, e.g. example.com')
    .action(async (name: string, _opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).domains.create(name), domainLines);
    });
  domains
    .command('list')
    .description("The tenant's sending domains")
    .action(async (_opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).domains.list(), (list) =>
        list.length ? table([['ID', 'NAME', 'STATUS'], ...list.map((d) => [d.id, d.name, d.status])]) : 'no sending domains',
      );
    });
  domains
    .command('show')
    .description('A domain, with the DNS records to publish and what the last check found')
    .argument('<id>', 'the domain id, dom_…')
    .action(async (id: string, _opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).domains.get(id), domainLines);
    });
  domains
    .command('verify')
    .description('Look the records up now; verified once DKIM and SPF match')
    .argument('<id>', 'the domain id, dom_…')
    .action(async (id: string, _opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).domains.verify(id), domainLines);
    });
  domains
    .command('delete')
    .description('Delete a sending domain')
    .argument('<id>', 'the domain id, dom_…')
    .action(async (id: string, _opts, cmd: Command) => {
      await clientOf(cmd).domains.delete(id);
      print(cmd, { id, deleted: true }, (x) => `deleted ${x.id}`);
    });
}
