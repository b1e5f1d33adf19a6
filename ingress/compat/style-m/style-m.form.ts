// Style M: a Mailgun request body, multipart/form-data or urlencoded, as one list of values per
// parameter, and the number of files it carried (attachments, to be refused by the gate).
import type { FastifyRequest } from 'fastify';
import { GatepostError } from '../../../errors/errors.catalog.ts';

/** The most bytes of parameter values one multipart request may carry (the JSON body limit too). */
export const MAX_FORM_BYTES = 16 * 1024 * 1024;

// Parameters that carry files: also counted when given as plain text (urlencoded).
const FILE_PARAMETERS = new Set(['attachment', 'inline']);

export interface Form {
  values: Map<string, string[]>;
  attachments: number;
}

function add(form: Form, name: string, value: string): void {
  if (FILE_PARAMETERS.has(name)) form.attachments++;
  else form.values.set(name, [...(form.values.get(name) ?? []), value]);
}

export async function readForm(request: FastifyRequest): Promise<Form> {
  const form: Form = { values: new Map(), attachments: 0 };
  if (!request.isMultipart()) {
    // Urlencoded, parsed by @fastify/formbody: repeated parameters come as arrays.
    for (const [name, value] of Object.entries((request.body ?? {}) as Record<string, string | string[]>)) {
      for (const v of [value].flat()) add(form, name, v);
    }
    return form;
  }
  let bytes = 0;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      // Read to the end (the next part comes after it), and count it: any file is an attachment.
      for await (const _chunk of part.file);
      form.attachments++;
      continue;
    }
    const value = String(part.value);
    bytes += Buffer.byteLength(value);
    if (part.valueTruncated || bytes > MAX_FORM_BYTES) {
      throw new GatepostError('message_too_large', 'The request body is larger than Gatepost accepts.');
    }
    add(form, part.fieldname, value);
  }
  return form;
}
