// VERP return-paths: the envelope sender names the message it carried, so a bounce sent back to
// it is tied to its message without parsing the bounce (the bounce subdomain, `bounces.<domain>`,
// is the return-path record a verified domain publishes).
// Message ids are lower-case base32 (lib/ids.ts), so one folded to upper case on its way back still reads.
const ID = /^msg_[0-9a-z]+$/;

/** `b+<message id>@<returnPathDomain>`. */
export function verpAddress(messageId: string, returnPathDomain: string): string {
  if (!ID.test(messageId)) throw new Error(`not a message id: ${messageId}`);
  return `b+${messageId}@${returnPathDomain.toLowerCase()}`;
}

/** The message id and domain of a VERP address, or null when the address is not one. */
export function parseVerp(address: string): { messageId: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at < 0) return null;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1).toLowerCase();
  const m = /^b\+(msg_[0-9a-z]+)$/i.exec(local);
  if (!m || !domain) return null;
  return { messageId: m[1]!.toLowerCase(), domain };
}

/** The return-path domain of a verified sending domain. */
export function returnPathDomain(domain: string): string {
  return `bounces.${domain.toLowerCase()}`;
}
