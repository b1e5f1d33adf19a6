// Guessing API keys over SMTP costs the guesser (issue 20 item 7): a connection is closed at its
// last allowed failed AUTH, and an address that failed too often within a window has its
// connections refused until the window ends.
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import type { SmtpLimits } from '../../config/config.ts';
import { replies, type SmtpReply } from './submission.replies.ts';

/** Addresses remembered at once: a guesser spread over more addresses pushes out the oldest. */
const MAX_ADDRESSES = 10_000;

/** Whom a failure is counted against: the address, or its /64 for IPv6, which one host usually holds whole. */
function clientOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  return parsed.kind() === 'ipv6' ? `${ipaddr.IPv6.networkAddressFromCIDR(`${address}/64`).toString()}/64` : parsed.toString();
}

export class AuthThrottle {
  // A count lives one window from an address's first failure: setting it again keeps that time (noUpdateTTL).
  private readonly byAddress: LRUCache<string, number>;
  private readonly bySession = new WeakMap<object, number>();

  constructor(
    private readonly limits: Pick<SmtpLimits, 'authFailuresPerSession' | 'authFailuresPerAddress' | 'authFailureWindowMs'>,
  ) {
    this.byAddress = new LRUCache({ max: MAX_ADDRESSES, ttl: limits.authFailureWindowMs, noUpdateTTL: true });
  }

  /** The refusal of a connection or AUTH from an address that failed too often, or null. */
  refusal(address: string): SmtpReply | null {
    const client = clientOf(address);
    if ((this.byAddress.get(client) ?? 0) < this.limits.authFailuresPerAddress) return null;
    return replies.tooManyFailures(Math.ceil(this.byAddress.getRemainingTTL(client) / 60_000));
  }

  /**
   * Counts a failed AUTH of a session (any object that lives as long as its connection) from an
   * address. Answers the reply that closes the connection when this failure was its last allowed
   * one, or when the address has now failed too often; null to answer the failure as it is.
   */
  failed(session: object, address: string): SmtpReply | null {
    const client = clientOf(address);
    this.byAddress.set(client, (this.byAddress.get(client) ?? 0) + 1);
    const failures = (this.bySession.get(session) ?? 0) + 1;
    this.bySession.set(session, failures);
    if (failures >= this.limits.authFailuresPerSession) return replies.sessionFailures;
    return this.refusal(address);
  }
}
