// Style M: a Mailgun request body, multipart/form-data or urlencoded, as one list of values per
// parameter, and the number of files it carried (attachments, to be refused by the gate).
import type { FastifyRequest } from 'fastify';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import { formError } from '../compat.errors.ts';

/** The most bytes of parameter values one multipart request may carry (the JSON body limit too). */
export const MAX_FORM_BYTES = 16 * 1024 * 1024;

// Parameters that carry files: also counted when given as plain text (urlencoded).
const FILE_PARAMETERS = new Set(['attachment', 'inline']);

export interface Form {
  values: Map<string, string[]>;
  attachments: number;
  /** `messages.mime`: the whole MIME message, from the `message` parameter (a file or a value). */
  mime?: Buffer;
}

// The MIME message of `messages.mime`: mailgun.js sends a string as a value, a Buffer or Blob as a file.
const MIME_PARAMETER = 'message';

function add(form: Form, name: string, value: string, mime: boolean): void {
  if (FILE_PARAMETERS.has(name)) form.attachments++;
  else if (mime && name === MIME_PARAMETER) form.mime = Buffer.from(value);
  else form.values.set(name, [...(form.values.get(name) ?? []), value]);
}

const tooLarge = () => new GatepostError('message_too_large', 'The request body is larger than Gatepost accepts.');

/** The request's parameters; with `mime`, its `message` parameter is the MIME message of `messages.mime`. */
export async function readForm(request: FastifyRequest, { mime = false } = {}): Promise<Form> {
  const form: Form = { values: new Map(), attachments: 0 };
  const put = (name: string, value: string) => add(form, name, value, mime);
  if (!request.isMultipart()) {
    // Urlencoded, parsed by @fastify/formbody: repeated parameters come as arrays.
    for (const [name, value] of Object.entries((request.body ?? {}) as Record<string, string | string[]>)) {
      for (const v of [value].flat()) put(name, v);
    }
    return form;
  }
  let bytes = 0;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        // Read to the end (the next part comes after it). The MIME message is kept; any other file
        // is an attachment, counted.
        const isMime = mime && part.fieldname === MIME_PARAMETER;
        const chunks: Buffer[] = [];
        for await (const chunk of part.file as AsyncIterable<Buffer>) {
          if (!isMime) continue;
          bytes += chunk.length;
          if (bytes > MAX_FORM_BYTES) throw tooLarge();
          chunks.push(chunk);
        }
        if (!isMime) form.attachments++;
        else if (part.file.truncated) throw tooLarge();
        else form.mime = Buffer.concat(chunks);
        continue;
      }
      const value = String(part.value);
      bytes += Buffer.byteLength(value);
      if (part.valueTruncated || bytes > MAX_FORM_BYTES) throw tooLarge();
      put(part.fieldname, value);
    }
  } catch (error) {
    throw formError(error);
  }
  return form;
}
