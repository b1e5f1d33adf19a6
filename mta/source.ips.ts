// The local addresses direct delivery connects from (GATEPOST_SOURCE_IPS, docs/deliverability.md):
// whether each is an address of this machine, and the order a message tries them in.
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';

/**
 * Throws, naming the address, unless every one is an address of this machine: one it could not
 * connect from would fail every delivery through it. Binding a listener is the test the kernel
 * itself applies to a connection's local address.
 */
export async function assertLocalAddresses(ips: string[]): Promise<void> {
  for (const ip of ips) {
    const server = createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, ip, resolve);
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new Error(`GATEPOST_SOURCE_IPS: ${ip} is not an address of this machine (${code})`);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}

/**
 * The source addresses in the order a message's attempt tries them: from one picked by the
 * message and its attempt (a hash, so the mail spreads evenly over them and each retry starts one
 * on), then the next ones in the listed order, wrapping around.
 */
export function sourceOrder(ips: string[], messageId: string, attempt: number): string[] {
  if (ips.length <= 1) return ips;
  const start = (createHash('sha1').update(messageId).digest().readUInt32BE(0) + attempt) % ips.length;
  return [...ips.slice(start), ...ips.slice(0, start)];
}
