// gatepost listen --forward-to <url>: the tenant's lifecycle events, read from Gatepost's event
// feed (GET /v1/events, long polling: the CLI calls out, so a development server Gatepost cannot
// reach still gets them), each POSTed to the local URL signed as Gatepost signs webhook
// deliveries, with a secret printed at start (or given with --secret). The development server
// verifies them with the SDK's verifyWebhook and that secret, as it will verify real deliveries.
import type { Command } from 'commander';
import { GatepostError, newSecret, signatureHeaders, type Event } from '../../sdk/node/index.ts';
import { clientOf, globals, UsageError } from '../context.ts';

/** What Gatepost holds each poll open for, seconds. */
const WAIT_SECONDS = 25;
/** One forward's deadline, ms. */
const FORWARD_TIMEOUT_MS = 10_000;
/** The pause after Gatepost could not be reached, before asking again, ms. */
const RECONNECT_MS = 2_000;

/** POSTs the event, signed; answers the status, or why there is none. */
async function forward(url: string, secret: string, event: Event): Promise<{ status: number | null; error: string | null }> {
  const body = JSON.stringify(event);
  const headers = signatureHeaders({
    eventId: event.id,
    eventType: event.type,
    body,
    secrets: [secret],
    timestamp: Math.floor(Date.now() / 1000),
  });
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'gatepost-cli' },
      body,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await res.arrayBuffer();
    return { status: res.status, error: null };
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause;
    return { status: null, error: cause?.code ?? (error as Error).message };
  }
}

function localUrl(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
    throw new UsageError(`--forward-to must be an http(s) URL: ${value}`);
  return value;
}

export function listenCommand(root: Command): void {
  root
    .command('listen')
    .description(
      "Forward the tenant's events to a local URL, signed as Gatepost signs webhooks, with the signing secret printed at start (Ctrl-C to stop)",
    )
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:8080/webhooks', localUrl)
    .option('--events <types>', 'only these event types, comma-separated (default: every one)')
    .option('--secret <whsec>', 'sign with this secret instead of a new one (keeps a dev server set up across runs)')
    .action(async (opts: { forwardTo: string; events?: string; secret?: string }, cmd: Command) => {
      const client = clientOf(cmd);
      const json = globals(cmd).json;
      const only = opts.events ? new Set(opts.events.split(',').filter(Boolean)) : null;
      const secret = opts.secret ?? newSecret();
      const stop = new AbortController();
      const interrupted = () => stop.abort();
      process.once('SIGINT', interrupted);
      process.once('SIGTERM', interrupted);
      const out = (line: object | string) => process.stdout.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
      try {
        // From now on: the first answer, at once, is the cursor of the present.
        let cursor = (await client.events.list({}, { signal: stop.signal })).cursor;
        out(
          json
            ? { ready: true, forward_to: opts.forwardTo, secret }
            : `Ready: forwarding events to ${opts.forwardTo}. Your webhook signing secret is ${secret} (Ctrl-C to stop)`,
        );
        while (!stop.signal.aborted) {
          let page;
          try {
            page = await client.events.list({ after: cursor, waitSeconds: WAIT_SECONDS }, { signal: stop.signal });
          } catch (error) {
            if (!(error instanceof GatepostError)) throw error;
            if (error.code === 'aborted') break;
            // Gatepost restarting or out of reach: say so, and go on asking.
            if (error.status !== null && error.status < 500) throw error;
            process.stderr.write(`gatepost: ${error.code}: ${error.message}; retrying\n`);
            await new Promise((r) => setTimeout(r, RECONNECT_MS));
            continue;
          }
          cursor = page.cursor;
          for (const event of page.data) {
            if (only && !only.has(event.type)) continue;
            const result = await forward(opts.forwardTo, secret, event);
            out(
              json
                ? { event_id: event.id, type: event.type, ...result }
                : `${event.created_at}  ${event.type.padEnd(14)} ${event.id} -> ${result.status ?? `failed: ${result.error}`}`,
            );
          }
        }
      } catch (error) {
        if (!(error instanceof GatepostError && error.code === 'aborted')) throw error;
      } finally {
        process.off('SIGINT', interrupted);
        process.off('SIGTERM', interrupted);
      }
    });
}
