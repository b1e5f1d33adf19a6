// The lists address validation checks a domain and a local part against (docs/validate.md):
// disposable domains from the maintained `disposable-email-domains` package (a plain JSON array,
// read once into a Set), and two short lists kept here, role accounts and free providers (the
// `free-email-domains` package fetches its list from the web when installed, so it is not used).
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

const DISPOSABLE: ReadonlySet<string> = new Set(load('disposable-email-domains') as string[]);

/** Whether the domain, or a domain it is under (`x.mailinator.com`), is a disposable-mail service. */
export function isDisposableDomain(domain: string): boolean {
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) if (DISPOSABLE.has(labels.slice(i).join('.'))) return true;
  return false;
}

/** Local parts that name a function or a team rather than a person (RFC 2142's among them). */
export const ROLE_ACCOUNTS: ReadonlySet<string> = new Set([
  'abuse',
  'admin',
  'administrator',
  'billing',
  'contact',
  'help',
  'hostmaster',
  'info',
  'mailer-daemon',
  'marketing',
  'no-reply',
  'noc',
  'noreply',
  'office',
  'postmaster',
  'root',
  'sales',
  'security',
  'support',
  'team',
  'webmaster',
]);

/** Whether the local part, without a `+tag` and case aside, is a role account. */
export function isRoleAccount(local: string): boolean {
  return ROLE_ACCOUNTS.has(local.toLowerCase().replace(/\+.*$/, ''));
}

/** Mailbox providers anyone may sign up to for free: an address there says nothing of an organisation. */
export const FREE_PROVIDERS: ReadonlySet<string> = new Set([
  'aol.com',
  'gmail.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'googlemail.com',
  'hotmail.co.uk',
  'hotmail.com',
  'hotmail.fr',
  'icloud.com',
  'live.com',
  'mail.com',
  'mail.ru',
  'me.com',
  'msn.com',
  'outlook.com',
  'pm.me',
  'proton.me',
  'protonmail.com',
  'qq.com',
  'web.de',
  'yahoo.co.uk',
  'yahoo.com',
  'yahoo.fr',
  'yandex.com',
  'yandex.ru',
  'ymail.com',
  'zoho.com',
]);
