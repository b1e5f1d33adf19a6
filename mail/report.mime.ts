// A small MIME walk for bounce and complaint reports: their machine-readable parts
// (message/delivery-status, message/feedback-report, text/rfc822-headers) are header-like field
// blocks that general parsers fold into the text, so the report parsers read the tree as it is.
// Bounded in depth and parts, so a hostile message costs no more than its size.

export interface MimePart {
  /** Header fields, unfolded, names lower-cased, in order. */
  headers: [string, string][];
  /** The media type, lower case (`text/plain` when none is given, as RFC 2045 says). */
  type: string;
  params: Record<string, string>;
  /** The body, its transfer encoding undone. */
  body: Buffer;
  parts: MimePart[];
}

const MAX_DEPTH = 6;
const MAX_PARTS = 64;

/** The header block and the body of an entity: split at the first empty line (none: all header). */
function split(raw: Buffer): { head: string; body: Buffer } {
  const text = raw.toString('latin1');
  const m = /\r?\n\r?\n/.exec(text);
  if (!m) return { head: text, body: Buffer.alloc(0) };
  return { head: text.slice(0, m.index), body: raw.subarray(m.index + m[0].length) };
}

/** RFC 5322 field blocks: `Name: value` lines, continuation lines folded in. */
export function fieldsOf(block: string): [string, string][] {
  const fields: [string, string][] = [];
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && fields.length > 0) {
      fields[fields.length - 1]![1] += ' ' + line.trim();
      continue;
    }
    const m = /^([!-9;-~]+):[ \t]*(.*)$/.exec(line);
    if (m) fields.push([m[1]!.toLowerCase(), m[2]!.trim()]);
  }
  return fields;
}

/** The first value of a field, or null. */
export const field = (fields: [string, string][], name: string): string | null => fields.find(([n]) => n === name)?.[1] ?? null;

/** Every value of a field. */
export const fieldAll = (fields: [string, string][], name: string): string[] =>
  fields.filter(([n]) => n === name).map(([, v]) => v);

function contentType(value: string | null): { type: string; params: Record<string, string> } {
  if (!value) return { type: 'text/plain', params: {} };
  const [type, ...rest] = value.split(';');
  const params: Record<string, string> = {};
  for (const m of rest.join(';').matchAll(/([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]*)/g)) {
    params[m[1]!.toLowerCase()] = m[2]!.startsWith('"') ? m[2]!.slice(1, -1).replace(/\\(.)/g, '$1') : m[2]!;
  }
  return { type: type!.trim().toLowerCase(), params };
}

function decode(body: Buffer, encoding: string | null): Buffer {
  switch (encoding?.toLowerCase()) {
    case 'base64':
      return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
    case 'quoted-printable':
      return Buffer.from(
        body
          .toString('latin1')
          .replace(/=\r?\n/g, '')
          .replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
        'latin1',
      );
    default:
      return body;
  }
}

/** The body parts between a multipart's boundaries (preamble and epilogue dropped). */
function bodyParts(body: Buffer, boundary: string): Buffer[] {
  const text = body.toString('latin1');
  const delimiter = `--${boundary}`;
  const parts: Buffer[] = [];
  let at = text.startsWith(delimiter) ? 0 : text.indexOf(`\n${delimiter}`);
  while (at >= 0 && parts.length < MAX_PARTS) {
    const start = text.indexOf('\n', at + (at === 0 ? 0 : 1));
    if (start < 0) break;
    const line = text.slice(at === 0 ? 0 : at + 1, start).trimEnd();
    if (line === `${delimiter}--`) break;
    const next = text.indexOf(`\n${delimiter}`, start);
    const end = next < 0 ? text.length : next;
    parts.push(body.subarray(start + 1, text[end - 1] === '\r' ? end - 1 : end));
    at = next;
  }
  return parts;
}

/** The MIME tree of an entity; message/rfc822 parts hold the message as their one child. */
export function mimeTree(raw: Buffer, depth = 0): MimePart {
  const { head, body: encoded } = split(raw);
  const headers = fieldsOf(head);
  const { type, params } = contentType(field(headers, 'content-type'));
  const body = decode(encoded, field(headers, 'content-transfer-encoding'));
  const part: MimePart = { headers, type, params, body, parts: [] };
  if (depth >= MAX_DEPTH) return part;
  if (type.startsWith('multipart/') && params.boundary) {
    part.parts = bodyParts(body, params.boundary).map((p) => mimeTree(p, depth + 1));
  } else if (type === 'message/rfc822' || type === 'message/global') {
    part.parts = [mimeTree(body, depth + 1)];
  }
  return part;
}

/** The first part of the tree (itself included, depth first) of one of `types`. */
export function findPart(tree: MimePart, ...types: string[]): MimePart | null {
  if (types.includes(tree.type)) return tree;
  for (const p of tree.parts) {
    const found = findPart(p, ...types);
    if (found) return found;
  }
  return null;
}

/** The address of an `rfc822; addr` typed field (RFC 3464), or of a plain `<addr>`; lower case. */
export function addressOf(value: string | null): string | null {
  if (!value) return null;
  const v = value.includes(';') ? value.slice(value.indexOf(';') + 1) : value;
  const m = /<([^<>\s]+@[^<>\s]+)>/.exec(v) ?? /([^\s<>;,"]+@[^\s<>;,"]+)/.exec(v);
  return m ? m[1]!.toLowerCase() : null;
}
