// A Mailgun form as SendDrafts: parameters given once or repeated, recipients fanned out, batch
// sending's recipient variables, and refusals worded by parameter.
import { describe, expect, it } from 'vitest';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import type { Form } from './style-m.form.ts';
import { inRequestTerms, itemsOf, messageParameters } from './style-m.map.ts';
import { mailgunError } from './style-m.errors.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const form = (fields: [string, string][], attachments = 0): Form => {
  const values = new Map<string, string[]>();
  for (const [name, value] of fields) values.set(name, [...(values.get(name) ?? []), value]);
  return { values, attachments };
};
const items = (fields: [string, string][]) => itemsOf(messageParameters(form(fields)), 0, NOW);
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return mailgunError(error as GatepostError).message;
  }
  throw new Error('not refused');
};

describe('Style M itemsOf', () => {
  it('makes one message per recipient, repeated or comma-separated, each with the copies', () => {
    const drafts = items([
      ['to', 'a@x.org, "Doe, Bo" <b@x.org>'],
      ['to', 'c@x.org'],
      ['cc', 'd@x.org,e@x.org'],
      ['subject', 's'],
      ['html', '<p>h</p>'],
      ['h:Reply-To', 'r@x.org'],
      ['h:X-Mailgun-Variables', '{"a":1}'],
      ['v:b', '2'],
      ['o:tag', 't1'],
      ['o:tag', 't2'],
      ['o:testmode', 'yes'],
    ]);
    expect(drafts.map((d) => [d.keySuffix, d.draft.to, d.draft.cc])).toEqual([
      ['0', 'a@x.org', ['d@x.org', 'e@x.org']],
      ['1', '"Doe, Bo" <b@x.org>', ['d@x.org', 'e@x.org']],
      ['2', 'c@x.org', ['d@x.org', 'e@x.org']],
    ]);
    expect(drafts[0]!.draft).toMatchObject({
      reply_to: 'r@x.org',
      headers: { 'X-Mailgun-Variables': '{"a":1,"b":"2"}' },
      data: { a: 1, b: '2' },
      tags: ['t1', 't2'],
      sandbox: true,
    });
  });

  it("gives each recipient its own recipient variables, as the renderer's placeholders", () => {
    const [a, b] = items([
      ['to', 'A@x.org'],
      ['to', 'b@x.org'],
      ['subject', 'Hi %recipient.first-name%'],
      ['text', '%recipient.code%'],
      ['recipient-variables', '{"a@X.org": {"first-name": "Ann", "code": 1}}'],
    ]);
    expect(a!.draft).toMatchObject({
      subject: 'Hi {{recipient.[first-name]}}',
      data: { recipient: { 'first-name': 'Ann', code: 1 } },
    });
    expect(a!.draft.html).toContain('{{recipient.[code]}}');
    expect(b!.draft.data).toEqual({ recipient: {} });
  });

  it('sends at once when o:deliverytime has come, and schedules it otherwise', () => {
    const at = (date: string) =>
      items([
        ['to', 'a@x.org'],
        ['html', 'h'],
        ['o:deliverytime', date],
      ])[0]!.draft.send_at;
    expect(at('Mon, 31 Dec 2029 23:00:00 +0000')).toBeUndefined();
    expect(at('Tue, 01 Jan 2030 02:00:00 +0100')).toBe('2030-01-01T01:00:00.000Z');
  });

  it('words refusals as Mailgun does, parameter by parameter', () => {
    expect(refusal(() => items([['html', 'h']]))).toBe("'to' parameter is missing");
    expect(
      refusal(() =>
        items([
          ['to', 'a@x.org'],
          ['html', 'h'],
          ['t:variables', '[1]'],
          ['o:tag', 'a'],
          ['o:tag', 'b'],
          ['o:tag', 'c'],
          ['o:tag', 'd'],
          ['amp-html', '<p/>'],
        ]),
      ),
    ).toBe("'amp-html' parameter is not supported by Gatepost; 'o:tag' parameter allows at most 3 tags per message");
    expect(
      refusal(() =>
        items([
          ['to', 'a@x.org'],
          ['html', 'h'],
          ['recipient-variables', 'nope'],
        ]),
      ),
    ).toBe("'recipient-variables' parameter must be a JSON object");
    const [item] = items([
      ['to', 'bad'],
      ['html', 'h'],
    ]);
    const gate = new GatepostError('invalid_request', 'x', {
      details: [
        { field: 'to', message: 'not a valid email address' },
        { field: 'send_at', message: 'is more than 30 days ahead' },
        { field: 'headers.From', message: 'set by Gatepost; use the dedicated field instead' },
      ],
    });
    expect(mailgunError(inRequestTerms(gate, item!)).message).toBe(
      "'to' parameter is invalid: not a valid email address (bad); 'o:deliverytime' parameter is more than 30 days ahead; 'h:From' parameter is invalid: set by Gatepost; use the dedicated field instead",
    );
  });
});

describe('Style M refusals of what no client means', () => {
  it('refuses CR, LF and other control characters in every address parameter', () => {
    for (const [name, value] of [
      ['to', 'ann@example.com\r\nBcc: v@example.com'],
      ['cc', 'c@example.com\nv@example.com'],
      ['bcc', 'c@example.com\u0000'],
      ['from', 'a@sender.example\r\nBcc: v@example.com'],
      ['h:Reply-To', 'r@example.com\rX: y'],
    ] as const) {
      const fields: [string, string][] = [
        ['from', 'a@sender.example'],
        ['to', 'ann@example.com'],
        ['html', '<p>h</p>'],
      ];
      const given = fields.filter(([n]) => n !== name).concat([[name, value]]);
      expect(
        refusal(() => items(given)),
        name,
      ).toBe(`'${name}' parameter is invalid: holds a control character (CR, LF, NUL, ...)`);
    }
  });

  it('refuses a parameter named __proto__ like any other unknown parameter', () => {
    expect(
      refusal(() =>
        items([
          ['to', 'a@x.org'],
          ['html', 'h'],
          ['__proto__', 'x'],
        ]),
      ),
    ).toMatch(/__proto__.*not supported/);
  });
});
