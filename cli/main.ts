// `gatepost`: the command line for Gatepost's API (docs/cli.md). Exit codes: 0 done, 1 the API
// refused or failed (or a receipt does not verify), 2 a usage error (a bad flag, no API key).
import { Command, CommanderError } from 'commander';
import { automationCommands } from './commands/automations.command.ts';
import { broadcastCommands } from './commands/broadcasts.command.ts';
import { domainCommands } from './commands/domains.command.ts';
import { inboxCommands } from './commands/inbox.command.ts';
import { listenCommand } from './commands/listen.command.ts';
import { messageCommands } from './commands/messages.command.ts';
import { receiptCommands } from './commands/receipt.command.ts';
import { sendCommand } from './commands/send.command.ts';
import { suppressionCommands } from './commands/suppressions.command.ts';
import { templateCommands } from './commands/templates.command.ts';
import { webhookCommands } from './commands/webhooks.command.ts';
import { EXIT, report } from './context.ts';

export const VERSION = '0.1.0';

export function program(): Command {
  const root = new Command('gatepost')
    .description(
      "Gatepost's API from the command line. The key comes from GATEPOST_API_KEY (or --api-key), the server from GATEPOST_URL (or --url).",
    )
    .version(VERSION)
    .option('--api-key <key>', 'the API key (default: GATEPOST_API_KEY)')
    .option('--url <url>', 'where Gatepost answers (default: GATEPOST_URL, then http://localhost:3000)')
    .option('--json', 'print results as JSON')
    .showSuggestionAfterError(false);
  for (const add of [
    sendCommand,
    messageCommands,
    templateCommands,
    suppressionCommands,
    webhookCommands,
    inboxCommands,
    domainCommands,
    broadcastCommands,
    automationCommands,
    receiptCommands,
    listenCommand,
  ]) {
    add(root);
  }
  // Commander's own failures (an unknown flag, a missing argument) end in exit 2, on one line;
  // --help and --version in 0.
  const exits = (cmd: Command) => {
    cmd
      .exitOverride()
      .configureOutput({ outputError: (text, write) => write(`gatepost: ${text.replace(/^error: /, '').trim()}\n`) });
    cmd.commands.forEach(exits);
  };
  exits(root);
  return root;
}

export async function main(argv: string[]): Promise<number> {
  const cli = program();
  try {
    await cli.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return report(error, argv.includes('--json'));
  }
}

const code = await main(process.argv.slice(2));
// A command may have set its own (an interrupted tail: 130).
if (!process.exitCode) process.exitCode = code;
