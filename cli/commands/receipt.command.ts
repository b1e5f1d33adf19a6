// gatepost receipt verify: fetches a message's delivery receipt and the operator's public keys,
// and checks the signature with the SDK's verifyReceipt (docs/receipts.md).
import type { Command } from 'commander';
import { ReceiptVerificationError } from '../../sdk/node/index.ts';
import { clientOf, EXIT, globals, print } from '../context.ts';

export function receiptCommands(root: Command): void {
  const receipt = root.command('receipt').description('Signed delivery receipts');
  receipt
    .command('verify')
    .description(
      "Fetch a message's latest receipt and verify its signature against the published keys (exit 1 if it does not verify)",
    )
    .argument('<id>', 'the message id, msg_…')
    .action(async (id: string, _opts, cmd: Command) => {
      try {
        const claims = await clientOf(cmd).messages.verifyReceipt(id);
        print(cmd, { verified: true, claims }, ({ claims: c }) => [
          `verified ${c.id} (seq ${c.seq}) for ${c.message_id}`,
          `sha256:   ${c.sha256}`,
          `envelope: ${c.envelope.from} -> ${c.envelope.to}`,
          `accepted: ${c.accepted_at ?? '-'} by ${c.mx ?? '-'} (${c.ip ?? '-'}): ${c.reply.text}`,
          `dkim:     ${c.dkim ? `d=${c.dkim.d} s=${c.dkim.s.join(',')}` : 'unsigned'}`,
        ]);
      } catch (error) {
        if (!(error instanceof ReceiptVerificationError)) throw error;
        if (globals(cmd).json)
          process.stdout.write(`${JSON.stringify({ verified: false, reason: error.reason, message: error.message })}\n`);
        else process.stderr.write(`gatepost: the receipt does not verify: ${error.reason}: ${error.message}\n`);
        process.exitCode = EXIT.api;
      }
    });
}
