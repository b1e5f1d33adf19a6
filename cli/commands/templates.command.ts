// gatepost templates push | pull | list: templates kept as files, one slug a name:
//
//   <dir>/<slug>.html   the html (required)
//   <dir>/<slug>.txt    the text part (optional; without it, made from the html)
//   <dir>/<slug>.json   {"subject": "…", "name", "from", "to", "reply_to"} (subject required)
//
// push makes the server's templates what the folder says (created, or every field replaced: a
// .txt removed clears the text); pull writes them back in the same form.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { GatepostError, type Template, type TemplateFields } from '../../sdk/node/index.ts';
import { clientOf, print, table, UsageError } from '../context.ts';
import { jsonObject, readText } from '../input.ts';

const META_FIELDS = ['name', 'from', 'to', 'reply_to'] as const;

/** The templates a folder holds, by slug: each `<slug>.html` with its .json and optional .txt. */
export function readTemplateDir(dir: string, only?: string): TemplateFields[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    throw new UsageError(`cannot read the folder ${dir}`);
  }
  const slugs = files.filter((f) => f.endsWith('.html')).map((f) => basename(f, '.html'));
  if (only !== undefined && !slugs.includes(only)) throw new UsageError(`no ${only}.html in ${dir}`);
  if (slugs.length === 0) throw new UsageError(`no <slug>.html file in ${dir}`);
  return slugs
    .filter((slug) => only === undefined || slug === only)
    .map((slug) => {
      const metaPath = join(dir, `${slug}.json`);
      if (!existsSync(metaPath)) throw new UsageError(`${slug}.html has no ${slug}.json (it gives the subject)`);
      const meta = jsonObject(readText(metaPath), `${slug}.json`);
      if (typeof meta.subject !== 'string') throw new UsageError(`${slug}.json has no "subject"`);
      const textPath = join(dir, `${slug}.txt`);
      const t: TemplateFields = {
        slug,
        subject: meta.subject,
        html: readText(join(dir, `${slug}.html`)),
        text: existsSync(textPath) ? readText(textPath) : null,
      };
      for (const field of META_FIELDS) {
        const value = meta[field];
        if (value !== undefined && value !== null && typeof value !== 'string')
          throw new UsageError(`${slug}.json: "${field}" must be a string`);
        t[field] = value ?? null;
      }
      return t;
    });
}

/** Writes a template as its files; answers the paths written. */
export function writeTemplate(dir: string, t: Template): string[] {
  const meta: Record<string, string> = { subject: t.subject };
  for (const field of META_FIELDS) if (t[field] !== null) meta[field] = t[field];
  const files: Array<[string, string]> = [
    [`${t.slug}.html`, t.html],
    [`${t.slug}.json`, `${JSON.stringify(meta, null, 2)}\n`],
  ];
  if (t.text !== null) files.push([`${t.slug}.txt`, t.text]);
  return files.map(([name, content]) => {
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  });
}

export function templateCommands(root: Command): void {
  const templates = root.command('templates').description('Templates, kept as files: <slug>.html, <slug>.txt and <slug>.json');
  templates
    .command('push')
    .description("Create or replace the server's templates from a folder's files")
    .argument('<dir>', 'the folder')
    .option('--slug <slug>', 'only this template')
    .action(async (dir: string, opts: { slug?: string }, cmd: Command) => {
      const client = clientOf(cmd);
      const results: Array<{ slug: string; action: 'created' | 'updated'; id: string }> = [];
      for (const t of readTemplateDir(dir, opts.slug)) {
        try {
          results.push({ slug: t.slug, action: 'created', id: (await client.templates.create(t)).id });
        } catch (error) {
          if (!(error instanceof GatepostError && error.code === 'template_exists')) throw error;
          const { slug, ...fields } = t;
          results.push({ slug, action: 'updated', id: (await client.templates.update(slug, fields)).id });
        }
      }
      print(cmd, results, (r) => r.map((x) => `${x.action} ${x.slug} (${x.id})`));
    });
  templates
    .command('pull')
    .description("Write the server's templates into a folder, as push reads them")
    .argument('<dir>', 'the folder (made if missing)')
    .option('--slug <slug>', 'only this template')
    .action(async (dir: string, opts: { slug?: string }, cmd: Command) => {
      const client = clientOf(cmd);
      const list = opts.slug !== undefined ? [await client.templates.get(opts.slug)] : await client.templates.list();
      mkdirSync(dir, { recursive: true });
      const written = list.map((t) => ({ slug: t.slug, files: writeTemplate(dir, t) }));
      print(cmd, written, (w) => w.map((x) => `pulled ${x.slug}: ${x.files.join(', ')}`));
    });
  templates
    .command('list')
    .description("The tenant's templates")
    .action(async (_opts, cmd: Command) => {
      print(cmd, await clientOf(cmd).templates.list(), (list) =>
        list.length
          ? table([['SLUG', 'SUBJECT', 'UPDATED'], ...list.map((t) => [t.slug, t.subject, t.updated_at])])
          : 'no templates',
      );
    });
}
