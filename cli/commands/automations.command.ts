// gatepost automations list | get | runs | run: automations, and the runs they started for
// contacts, with their timelines (docs/automations.md). They are made through the API.
import type { Command } from 'commander';
import type { Automation, AutomationRun } from '../../sdk/node/index.ts';
import { clientOf, print, table } from '../context.ts';

function triggerOf(a: Automation): string {
  const t = a.trigger;
  return t.type === 'email_event' ? `email_event ${t.event}` : t.type === 'custom_event' ? `custom_event ${t.name}` : t.type;
}

function automationLines(a: Automation): string[] {
  return [
    `${a.id}  ${a.enabled ? 'enabled' : 'disabled'}${a.sandbox ? ' (sandbox)' : ''}  ${a.name}`,
    `audience: ${a.audience_id}`,
    `trigger:  ${triggerOf(a)}`,
    '',
    ...table([
      ['STEP', 'TYPE', 'WHAT'],
      ...a.steps.map((s) => [
        s.id,
        s.type,
        s.type === 'wait'
          ? `${s.duration}`
          : s.type === 'send'
            ? `template ${s.template} from ${s.from}`
            : `${s.opened ? `opened ${s.opened}` : `clicked ${s.clicked}`} then ${s.then ?? 'next'} else ${s.else ?? 'next'}`,
      ]),
    ]),
  ];
}

function runLines(r: AutomationRun): string[] {
  return [
    `${r.id}  ${r.status}${r.reason ? ` (${r.reason})` : ''}  ${r.email}`,
    `started:  ${r.started_at}`,
    '',
    ...table([
      ['AT', 'ENTRY', 'STEP', 'DATA'],
      ...r.timeline.map((e) => [e.at, e.type, e.step ?? '', Object.keys(e.data).length ? JSON.stringify(e.data) : '']),
    ]),
  ];
}

export function automationCommands(root: Command): void {
  const automations = root.command('automations').description('Automations and their runs (made through the API)');
  automations
    .command('list')
    .description("The tenant's automations, oldest first")
    .action(async (_opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).automations.list(), (list) =>
        list.length
          ? table([
              ['ID', 'STATE', 'TRIGGER', 'NAME'],
              ...list.map((a) => [a.id, a.enabled ? 'enabled' : 'disabled', triggerOf(a), a.name]),
            ])
          : 'no automations',
      );
    });
  automations
    .command('get')
    .description('An automation: its trigger and steps')
    .argument('<id>', 'the automation id, aut_…')
    .action(async (id: string, _opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).automations.get(id), automationLines);
    });
  automations
    .command('runs')
    .description("An automation's runs, newest first")
    .argument('<id>', 'the automation id, aut_…')
    .option('--limit <n>', 'how many (at most 1000)', (v) => Number(v), 20)
    .action(async (id: string, opts: { limit: number }, cmd: Command) => {
      const page = await clientOf(cmd).automations.runs(id, { limit: opts.limit });
      print(cmd, page.data, (list) =>
        list.length
          ? table([['RUN', 'STATUS', 'UPDATED', 'EMAIL'], ...list.map((r) => [r.id, r.status, r.updated_at, r.email])])
          : 'no runs',
      );
    });
  automations
    .command('run')
    .description('One run, with its timeline')
    .argument('<id>', 'the automation id, aut_…')
    .argument('<run>', 'the run id, run_…')
    .action(async (id: string, run: string, _opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).automations.run(id, run), runLines);
    });
}
