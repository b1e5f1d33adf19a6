// CSV import of an audience's contacts (docs/broadcasts.md#csv-import). The file is streamed
// twice over, never held whole: a first pass parses and checks every row and writes the rows to
// add to a spool file beside, a second applies them in transactions of IMPORT_BATCH rows. So a
// file that cannot be parsed (a broken quote, a record over MAX_RECORD_BYTES, rows of differing
// widths) is refused whole with `csv_invalid` and changes nothing, and a row that parses but is
// wrong (a bad address, an email met before in the file) is refused on its own and reported.
import { parse, CsvError } from 'csv-parse';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { GatepostError } from '../errors/errors.catalog.ts';
import { newId } from '../lib/ids.ts';
import { isValidAddress, normalizeAddress } from '../mail/address.ts';
import type { Catalog, ContactUpsert } from '../store/catalog.port.ts';

/** The longest record (one row, quoted line breaks included) taken, in characters. */
export const MAX_RECORD_BYTES = 64 * 1024;
/** The refused rows a report lists; all are counted. */
export const MAX_REFUSED_LISTED = 100;
/** The most data rows one file may have: the emails seen are kept to refuse a repeat, so this bounds them. */
export const MAX_IMPORT_ROWS = 1_000_000;
const IMPORT_BATCH = 1000;

export interface RefusedRow {
  /** The record's place in the file, the header being row 1. */
  row: number;
  email: string;
  reason: string;
}

export interface ImportReport {
  added: number;
  updated: number;
  refused_count: number;
  /** The first MAX_REFUSED_LISTED refused rows. */
  refused: RefusedRow[];
}

/** The columns a contact has by name; every other column goes into its `data`. */
const EMAIL = 'email';
const NAME = 'name';
const UNSUBSCRIBED = 'unsubscribed';
const FLAGS: Record<string, boolean> = { true: true, yes: true, '1': true, false: false, no: false, '0': false };

const csvInvalid = (message: string, row?: number) =>
  new GatepostError('csv_invalid', message, row === undefined ? {} : { details: [{ field: `row ${row}`, message }] });

/** One parsed row as a contact to upsert, or the reason it is refused. */
export function contactOfRow(record: Record<string, string>): ContactUpsert | string {
  const email = normalizeAddress(record[EMAIL] ?? '');
  if (!email) return 'no email';
  if (!isValidAddress(email)) return 'not a valid email address';
  const contact: ContactUpsert = { id: newId('con'), email, data: {} };
  for (const [column, value] of Object.entries(record)) {
    if (column === EMAIL || value === '') continue;
    if (column === NAME) {
      if (value.length > 200) return 'name longer than 200 characters';
      contact.name = value;
    } else if (column === UNSUBSCRIBED) {
      const flag = FLAGS[value.trim().toLowerCase()];
      if (flag === undefined) return 'unsubscribed is not one of true, false, yes, no, 1, 0';
      contact.unsubscribed = flag;
    } else contact.data[column] = value;
  }
  return contact;
}

/** Header cells as column names: trimmed, lower case; an empty or repeated one refuses the file. */
function columnsOf(header: string[]): string[] {
  const columns = header.map((h) => h.trim().toLowerCase());
  if (!columns.includes(EMAIL)) throw csvInvalid('The header row has no "email" column.', 1);
  const seen = new Set<string>();
  for (const c of columns) {
    if (!c) throw csvInvalid('A column of the header row has no name.', 1);
    if (seen.has(c)) throw csvInvalid(`The header row names the column "${c}" twice.`, 1);
    seen.add(c);
  }
  return columns;
}

/** Why csv-parse stopped, in words for the client. */
function parseProblem(error: CsvError): string {
  switch (error.code) {
    case 'CSV_MAX_RECORD_SIZE':
      return `A record is longer than ${MAX_RECORD_BYTES} characters.`;
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'A quoted field is never closed.';
    case 'CSV_RECORD_INCONSISTENT_COLUMNS':
      return 'A row has a different number of fields than the header row.';
    default:
      return error.message;
  }
}

/** Parses and checks `body`, spooling the rows to apply as JSON lines; refuses an unparseable file whole. */
async function check(body: Readable, spool: string, report: ImportReport, maxRows: number): Promise<void> {
  let header = false;
  const columns = (cells: string[]) => {
    header = true;
    return columnsOf(cells);
  };
  const parser = parse({ columns, bom: true, max_record_size: MAX_RECORD_BYTES, skip_empty_lines: true });
  const out = createWriteStream(spool);
  const seen = new Set<string>();
  let row = 1;
  const refuse = (email: string, reason: string) => {
    report.refused_count++;
    if (report.refused.length < MAX_REFUSED_LISTED) report.refused.push({ row, email, reason });
  };
  body.pipe(parser);
  // A client that stops sending ends the parse as an error.
  body.once('error', (error) => parser.destroy(error));
  body.once('close', () => {
    if (!body.readableEnded) parser.destroy(new Error('The request ended before its body did.'));
  });
  try {
    for await (const record of parser as AsyncIterable<Record<string, string>>) {
      row++;
      if (row - 1 > maxRows) throw csvInvalid(`The file has more than ${maxRows} rows; split it.`, row);
      const contact = contactOfRow(record);
      if (typeof contact === 'string') {
        refuse(record[EMAIL] ?? '', contact);
        continue;
      }
      if (seen.has(contact.email)) {
        refuse(contact.email, 'the email is on an earlier row of the file');
        continue;
      }
      seen.add(contact.email);
      if (!out.write(`${JSON.stringify(contact)}\n`)) await once(out, 'drain');
    }
    if (!header) {
      throw csvInvalid('The file is empty: it needs a header row naming an "email" column.');
    }
  } catch (error) {
    body.unpipe(parser);
    body.resume();
    // The parser reads ahead of this loop: the row it stopped at is its own count (data records, then the header).
    if (error instanceof CsvError) throw csvInvalid(parseProblem(error), (error as CsvError & { records: number }).records + 2);
    throw error;
  } finally {
    out.end();
    await once(out, 'close');
  }
}

/** Applies the spooled rows in batches, each one transaction. */
/** Told of each batch's new contacts once it is committed: the audience's automations start their runs. */
export interface ImportHooks {
  added(contacts: Pick<ContactUpsert, 'id' | 'email'>[]): Promise<void>;
}

async function apply(
  catalog: Catalog,
  tenantId: string,
  audienceId: string,
  spool: string,
  report: ImportReport,
  hooks?: ImportHooks,
): Promise<void> {
  let batch: ContactUpsert[] = [];
  const flush = async () => {
    const { added, updated, added_ids } = await catalog.upsertContacts(tenantId, audienceId, batch);
    report.added += added;
    report.updated += updated;
    if (hooks && added_ids.length > 0) {
      const ids = new Set(added_ids);
      await hooks.added(batch.filter((c) => ids.has(c.id)));
    }
    batch = [];
  };
  for await (const line of createInterface({ input: createReadStream(spool), crlfDelay: Infinity })) {
    batch.push(JSON.parse(line) as ContactUpsert);
    if (batch.length === IMPORT_BATCH) await flush();
  }
  if (batch.length > 0) await flush();
}

/** Imports a CSV stream into an audience (which the caller has found to be the tenant's). */
export async function importContacts(
  catalog: Catalog,
  tenantId: string,
  audienceId: string,
  body: Readable,
  opts: { hooks?: ImportHooks; maxRows?: number } = {},
): Promise<ImportReport> {
  const report: ImportReport = { added: 0, updated: 0, refused_count: 0, refused: [] };
  const dir = await mkdtemp(join(tmpdir(), 'gatepost-import-'));
  try {
    const spool = join(dir, 'rows.ndjson');
    await check(body, spool, report, opts.maxRows ?? MAX_IMPORT_ROWS);
    await apply(catalog, tenantId, audienceId, spool, report, opts.hooks);
    return report;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
