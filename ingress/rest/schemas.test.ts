// What the native schemas refuse before anything else looks at a request (issue 20, item 9).
import { describe, expect, it } from 'vitest';
import { TemplateCreate, WebhookUrl } from './schemas.ts';

const issues = (result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];

describe('native schemas', () => {
  it('refuses a template whose subject holds CR or LF', () => {
    for (const subject of ['Hi\r\nBcc: v@example.com', 'Hi\nthere', 'Hi\r']) {
      expect(issues(TemplateCreate.safeParse({ slug: 's', subject, html: 'h' }))).toEqual(['subject: must not contain CR or LF']);
    }
    expect(TemplateCreate.safeParse({ slug: 's', subject: 'Hi {{name}}', html: 'h' }).success).toBe(true);
  });

  it('refuses a webhook URL carrying a user name or password', () => {
    for (const url of [
      'https://user:pass@hooks.example.com/in',
      'https://user@hooks.example.com/',
      'https://:pw@hooks.example.com/',
    ]) {
      expect(issues(WebhookUrl.safeParse(url)), url).toEqual([': must not carry a user name or password']);
    }
    expect(WebhookUrl.safeParse('https://hooks.example.com/in?x=1').success).toBe(true);
  });
});
