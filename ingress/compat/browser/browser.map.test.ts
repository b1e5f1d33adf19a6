// The EmailJS wire format into drafts: what the official client sends, and every way a request
// can be refused before anything is looked up.
import { describe, expect, it } from 'vitest';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import { fromForm, fromJson } from './browser.map.ts';

const body = { lib_version: '4.4.1', user_id: 'gp_public_x', service_id: 'default_service', template_id: 'contact' };

function refused(parse: () => unknown): { code: string; message: string } {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(GatepostError);
    return { code: (error as GatepostError).code, message: (error as GatepostError).message };
  }
  throw new Error('expected a refusal');
}

describe('fromJson (emailjs.send)', () => {
  it('makes a draft of the template and its params, on the stream service_id names, and nothing else', () => {
    expect(fromJson({ ...body, template_params: { name: 'Ann', cc: 'x@evil.example' } })).toEqual({
      userId: 'gp_public_x',
      draft: { template: 'contact', data: { name: 'Ann', cc: 'x@evil.example' }, stream: 'transactional', attachments: 0 },
    });
    expect(fromJson({ ...body, service_id: 'transactional', template_params: null }).draft).toMatchObject({
      stream: 'transactional',
      data: {},
    });
    expect(fromJson({ ...body, service_id: 'broadcast' }).draft.stream).toBe('broadcast');
  });

  it('refuses a missing parameter in EmailJS words, user_id first', () => {
    expect(refused(() => fromJson({}))).toEqual({ code: 'missing_api_key', message: 'The user_id parameter is required' });
    expect(refused(() => fromJson(undefined))).toEqual({ code: 'missing_api_key', message: 'The user_id parameter is required' });
    expect(refused(() => fromJson({ ...body, user_id: '' }))).toMatchObject({ code: 'missing_api_key' });
    expect(refused(() => fromJson({ ...body, template_id: undefined }))).toEqual({
      code: 'invalid_request',
      message: 'The template_id parameter is required',
    });
    expect(refused(() => fromJson({ ...body, user_id: 42 }))).toEqual({
      code: 'invalid_request',
      message: 'The user_id parameter is invalid',
    });
  });

  it('refuses any field beside the EmailJS ones, an address above all', () => {
    for (const field of ['to', 'cc', 'bcc', 'reply_to', 'from', 'subject', 'html']) {
      expect(refused(() => fromJson({ ...body, [field]: 'x@evil.example' }))).toEqual({
        code: 'invalid_request',
        message: `The ${field} parameter is not supported: the template decides the message and its recipient`,
      });
    }
    expect(refused(() => fromJson({ ...body, accessToken: 'secret' })).message).toMatch(
      /^The accessToken parameter is not supported/,
    );
  });

  it('refuses params that are not an object, a body that is not one, and a service it does not know', () => {
    expect(refused(() => fromJson({ ...body, template_params: ['a'] })).message).toBe('The template_params parameter is invalid');
    expect(refused(() => fromJson(['x'])).message).toBe('The request body must be a JSON object');
    for (const service_id of ['service_abc', 'constructor', '__proto__']) {
      expect(refused(() => fromJson({ ...body, service_id })).message).toBe(
        'The service ID is invalid: use default_service (or transactional, or broadcast)',
      );
    }
  });
});

describe('fromForm (emailjs.sendForm)', () => {
  const controls = Object.entries(body);

  it("makes the form's inputs the template params (repeated names as lists) and counts its files", () => {
    const send = fromForm(
      [['name', 'Ann'], ['to', 'x@evil.example'], ['topic', 'a'], ['topic', 'b'], ['topic', 'c'], ...controls],
      0,
    );
    expect(send).toEqual({
      userId: 'gp_public_x',
      draft: {
        template: 'contact',
        data: { name: 'Ann', to: 'x@evil.example', topic: ['a', 'b', 'c'] },
        stream: 'transactional',
        attachments: 0,
      },
    });
    expect(fromForm(controls, 2).draft.attachments).toBe(2);
    // Any input name is a param of its own, even one an object would take for its prototype.
    const odd = fromForm([...controls, ['__proto__', 'x']], 0).draft.data!;
    expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(odd, '__proto__')?.value).toBe('x');
  });

  it('refuses a control field given twice or missing', () => {
    expect(refused(() => fromForm([...controls, ['template_id', 'other']], 0)).message).toBe(
      'The template_id parameter is given twice',
    );
    expect(
      refused(() =>
        fromForm(
          controls.filter(([n]) => n !== 'user_id'),
          0,
        ),
      ),
    ).toEqual({
      code: 'missing_api_key',
      message: 'The user_id parameter is required',
    });
  });
});
