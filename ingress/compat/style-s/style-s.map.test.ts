// A SendGrid request as SendDrafts: the fan-out, what wins where both levels set a field, and
// refusals named by SendGrid's field paths.
import { describe, expect, it } from 'vitest';
import { GatepostError } from '../../../errors/errors.catalog.ts';
import { inRequestTerms, itemsOf } from './style-s.map.ts';
import { SendGridMail } from './style-s.schema.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const mail = (extra: Record<string, unknown>) =>
  SendGridMail.parse({ content: [{ type: 'text/html', value: '<p>h</p>' }], subject: 'Top', ...extra });

describe('Style S itemsOf', () => {
  it('makes one message per to address, each with its personalization’s cc, bcc and variables', () => {
    const items = itemsOf(
      mail({
        from: { email: 'app@sender.example', name: 'App, Inc.' },
        categories: ['c1'],
        custom_args: { a: '1' },
        headers: { 'X-Top': 't' },
        personalizations: [
          { to: [{ email: 'a@x.org' }, { email: 'b@x.org', name: 'Bee' }], cc: [{ email: 'c@x.org' }], custom_args: { a: '2' } },
          { to: [{ email: 'd@x.org' }], subject: 'Own', headers: { 'X-Own': 'o' }, substitutions: { '{{n}}': '1' } },
        ],
      }),
      NOW,
    );
    expect(items.map((i) => [i.keySuffix, i.draft.to, i.draft.cc, i.draft.subject])).toEqual([
      ['0:0', 'a@x.org', ['c@x.org'], 'Top'],
      ['0:1', 'Bee <b@x.org>', ['c@x.org'], 'Top'],
      ['1:0', 'd@x.org', undefined, 'Own'],
    ]);
    expect(items[0]!.draft).toMatchObject({
      from: '"App, Inc." <app@sender.example>',
      tags: ['c1', 'a:2'],
      headers: { 'X-Top': 't' },
    });
    expect(items[2]!.draft).toMatchObject({ data: { n: '1' }, headers: { 'X-Top': 't', 'X-Own': 'o' }, tags: ['c1', 'a:1'] });
  });

  it('sends at once when send_at has come, and schedules it otherwise', () => {
    const at = (send_at: number) => itemsOf(mail({ send_at, personalizations: [{ to: [{ email: 'a@x.org' }] }] }), NOW)[0]!;
    expect(at(NOW / 1000 - 60).draft.send_at).toBeUndefined();
    expect(at(NOW / 1000 + 3600).draft.send_at).toBe('2030-01-01T01:00:00.000Z');
  });

  it('makes an HTML part from a text-only send, and takes a template without content', () => {
    const textOnly = itemsOf(
      mail({ content: [{ type: 'text/plain', value: 'a < b\nc' }], personalizations: [{ to: [{ email: 'a@x.org' }] }] }),
    )[0]!;
    expect(textOnly.draft).toMatchObject({ text: 'a < b\nc', html: '<div style="white-space: pre-wrap">a &lt; b\nc</div>' });
    const template = itemsOf(
      mail({ content: undefined, template_id: 'd-1', personalizations: [{ to: [{ email: 'a@x.org' }] }] }),
    )[0]!;
    expect(template.draft).toMatchObject({ template: 'd-1', html: undefined });
  });

  it('refuses what Gatepost would not honour, naming every field', () => {
    const refused = () =>
      itemsOf(
        mail({
          content: [{ type: 'text/calendar', value: 'x' }],
          mail_settings: { sandbox_mode: { enable: true }, bypass_list_management: { enable: true }, footer: { enable: false } },
          personalizations: [{ to: [{ email: 'a@x.org' }], bcc: [{ email: 'A@x.org' }], substitutions: { '-n-': '1' } }],
        }),
      );
    expect(refused).toThrow(GatepostError);
    try {
      refused();
    } catch (error) {
      expect((error as GatepostError).details!.map((d) => d.field)).toEqual([
        'mail_settings.bypass_list_management.enable',
        'content.0.type',
        'personalizations.0',
        'personalizations.0.substitutions',
      ]);
    }
  });

  it("names a message's refused fields as the request named them", () => {
    const [top, own] = itemsOf(
      mail({
        personalizations: [
          { to: [{ email: 'a@x.org' }] },
          { to: [{ email: 'b@x.org' }, { email: 'c@x.org' }], from: { email: 'p@x.org' }, subject: 'S' },
        ],
      }),
    ).slice(1);
    const fields = (item: typeof top, ...names: string[]) =>
      inRequestTerms(
        new GatepostError('invalid_request', 'x', { details: names.map((field) => ({ field, message: 'm' })) }),
        item!,
      ).details!.map((d) => d.field);
    expect(fields(top, 'to', 'cc[1]', 'from', 'subject', 'html', 'headers.X-A')).toEqual([
      'personalizations.1.to.0.email',
      'personalizations.1.cc.1.email',
      'personalizations.1.from.email',
      'personalizations.1.subject',
      'content',
      'headers.X-A',
    ]);
    expect(fields(own, 'to', 'reply_to', 'template')).toEqual(['personalizations.1.to.1.email', 'reply_to.email', 'template_id']);
  });
});
