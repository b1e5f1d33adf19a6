// The built `gatepost` CLI, run as a child process against a real Gatepost that delivers to an
// MX host on loopback (a DNS server on loopback names it): every command, --json, the exit codes,
// a sending domain created, published and verified from the CLI, and a real receipt verified.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../test/harness/domains.harness.ts';
import { startDns, type DnsServer } from '../test/harness/dns.harness.ts';
import { eventually, startGatepost, type GatepostProcess } from '../test/harness/gatepost.harness.ts';
import { freePort, startMx, type MxHost } from '../test/harness/mx.harness.ts';
import { Gatepost } from '../sdk/node/index.ts';
import { buildCli, gatepost, removeCliBuild, startGatepostCli } from './cli.testkit.ts';

let gp: GatepostProcess;
let dns: DnsServer;
let mx: MxHost;
let tenant: Awaited<ReturnType<GatepostProcess['tenant']>>;
/** The environment of a shell with the sandbox key; `live` with the live key. */
let sandboxEnv: Record<string, string>;
let liveEnv: Record<string, string>;

beforeAll(async () => {
  buildCli();
  const port = await freePort();
  mx = await startMx('127.0.0.2', port, { starttls: true });
  dns = await startDns({
    'mx.accept.test': { A: ['127.0.0.2'] },
    'accept.test': { MX: [{ exchange: 'mx.accept.test', priority: 10 }] },
  });
  gp = await startGatepost({
    env: { GATEPOST_DNS_SERVERS: dns.address, GATEPOST_MX_PORT: String(port), GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8' },
  });
  tenant = await gp.tenant();
  sandboxEnv = { GATEPOST_URL: gp.url, GATEPOST_API_KEY: tenant.sandbox };
  liveEnv = { GATEPOST_URL: gp.url, GATEPOST_API_KEY: tenant.live };
  // Compiling the CLI, then starting Gatepost: more than a hook's usual minute on a loaded machine.
}, 180_000);
afterAll(async () => {
  removeCliBuild();
  await gp?.dispose();
  await mx?.close();
  await dns?.close();
});

const json = <T = any>(stdout: string): T => JSON.parse(stdout) as T;

/** The help of every command, by its path, read from the help of each command that has subcommands. */
async function helps(path: string[] = []): Promise<Map<string, string>> {
  const help = await gatepost([...path, '--help']);
  expect(help.code, path.join(' ')).toBe(0);
  const found = new Map([[path.join(' '), help.stdout]]);
  const names = (help.stdout.split('Commands:\n')[1] ?? '')
    .split('\n')
    .map((l) => /^ {2}(\S+)/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined && n !== 'help');
  for (const nested of await Promise.all(names.map((n) => helps([...path, n])))) for (const [k, v] of nested) found.set(k, v);
  return found;
}

describe('usage', () => {
  it('has help on every command, exit 0', async () => {
    const all = await helps();
    const expected = [
      'send',
      'messages get',
      'messages tail',
      'templates push',
      'templates pull',
      'suppressions add',
      'broadcasts create',
    ];
    expect([...all.keys()]).toEqual(
      expect.arrayContaining([
        ...expected,
        'webhooks create',
        'inbox list',
        'domains verify',
        'receipt verify',
        'listen',
        'broadcasts send',
        'automations runs',
      ]),
    );
    for (const [path, help] of all) expect(help, path).toMatch(new RegExp(`^Usage: gatepost${path ? ` ${path}` : ''} `));
  });

  it('refuses a missing key, a bad flag and a missing argument on one line, exit 2', async () => {
    const noKey = await gatepost(['inbox'], { GATEPOST_URL: gp.url });
    expect(noKey).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'gatepost: no API key: set GATEPOST_API_KEY or pass --api-key\n',
    });
    const badFlag = await gatepost(['send', '--too', 'x@example.com'], sandboxEnv);
    expect(badFlag).toMatchObject({ code: 2, stderr: "gatepost: unknown option '--too'\n" });
    const missing = await gatepost(['messages', 'get'], sandboxEnv);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    const badData = await gatepost(['send', '--to', 'a@example.com', '--data', '{nope'], sandboxEnv);
    expect(badData).toMatchObject({ code: 2, stderr: 'gatepost: --data is not JSON\n' });
  });

  it("answers the API's refusal on one line, exit 1, and in JSON with --json", async () => {
    const res = await gatepost(['messages', 'get', 'msg_00000000000000000000000000'], sandboxEnv);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^gatepost: not_found: .+\n$/);
    const asJson = await gatepost(['--json', 'messages', 'get', 'msg_00000000000000000000000000'], sandboxEnv);
    expect(asJson.code).toBe(1);
    expect(json(asJson.stderr)).toMatchObject({ error: { code: 'not_found', status: 404 } });
    const wrongKey = await gatepost(['inbox', '--api-key', 'gp_sandbox_wrong'], { GATEPOST_URL: gp.url });
    expect(wrongKey).toMatchObject({ code: 1 });
    expect(wrongKey.stderr).toMatch(/^gatepost: invalid_api_key: /);
  });

  it('runs through the bin launcher', async () => {
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(process.execPath, [join(import.meta.dirname, 'gatepost.js'), '--version'], {
      env: { PATH: process.env.PATH },
    });
    expect(out.toString().trim()).toBe('0.1.0');
  });
});

describe('sending and reading', () => {
  it('sends with the sandbox key, tails the timeline to email.sent, reads the message and the inbox', async () => {
    const sent = await gatepost(
      [
        '--json',
        'send',
        '--to',
        'ann@example.com',
        '--subject',
        'Hi {{name}}',
        '--html',
        '<p>Hi {{name}}</p>',
        '--data',
        '{"name":"Ann"}',
        '--tag',
        'cli',
      ],
      sandboxEnv,
    );
    expect(sent.code).toBe(0);
    const { id } = json(sent.stdout);
    expect(id).toMatch(/^msg_/);

    const tail = await gatepost(['messages', 'tail', id, '--interval', '100'], sandboxEnv);
    expect(tail.code).toBe(0);
    expect(
      tail.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)[1]),
    ).toEqual(['message.accepted', 'message.queued', 'email.sent']);

    const got = await gatepost(['--json', 'messages', 'get', id], sandboxEnv);
    expect(json(got.stdout)).toMatchObject({ id, status: 'sent', subject: 'Hi Ann', tags: ['cli'] });
    const human = await gatepost(['messages', 'get', id], sandboxEnv);
    expect(human.stdout).toContain(`${id}  sent (sandbox)`);

    const inbox = await gatepost(['inbox'], sandboxEnv);
    expect(inbox.stdout).toMatch(new RegExp(`${id} .* ann@example.com +Hi Ann`));
    const shown = await gatepost(['inbox', 'show', id], sandboxEnv);
    expect(shown.stdout).toContain('subject:  Hi Ann');
    expect(shown.stdout).toContain('Hi Ann');
  });

  it('tails a scheduled message until Ctrl-C, exit 130', async () => {
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const sent = json(
      (
        await gatepost(
          ['--json', 'send', '--to', 's@example.com', '--subject', 'S', '--html', 's', '--send-at', later],
          sandboxEnv,
        )
      ).stdout,
    );
    expect(sent.status).toBe('scheduled');
    const tail = startGatepostCli(['messages', 'tail', sent.id, '--interval', '100'], sandboxEnv);
    await tail.line((l) => l.includes('message.scheduled'));
    tail.child.kill('SIGINT');
    expect(await tail.exited).toBe(130);
  });

  it('replays a send given the same --idempotency-key', async () => {
    const args = [
      '--json',
      'send',
      '--to',
      'b@example.com',
      '--subject',
      'Once',
      '--html',
      '<p>1</p>',
      '--idempotency-key',
      'cli-once',
    ];
    const first = json((await gatepost(args, sandboxEnv)).stdout);
    const again = json((await gatepost(args, sandboxEnv)).stdout);
    expect(again).toEqual({ ...first, replayed: true });
  });
});

describe('templates from files', () => {
  it('pushes a folder, pulls it back the same, updates on a second push, and sends with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatepost-templates-'));
    writeFileSync(join(dir, 'welcome.html'), '<p>Welcome {{name}}</p>');
    writeFileSync(join(dir, 'welcome.txt'), 'Welcome {{name}}');
    writeFileSync(
      join(dir, 'welcome.json'),
      `${JSON.stringify({ subject: 'Welcome {{name}}', name: 'Welcome mail' }, null, 2)}\n`,
    );
    writeFileSync(join(dir, 'reset.html'), '<p>Reset: {{link}}</p>');
    writeFileSync(
      join(dir, 'reset.json'),
      `${JSON.stringify({ subject: 'Reset your password', from: 'Shop <shop@example.com>' }, null, 2)}\n`,
    );

    const pushed = await gatepost(['templates', 'push', dir], liveEnv);
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toMatch(/^created reset \(tpl_\w+\)\ncreated welcome \(tpl_\w+\)\n$/);

    const back = mkdtempSync(join(tmpdir(), 'gatepost-pulled-'));
    expect((await gatepost(['templates', 'pull', back], liveEnv)).code).toBe(0);
    expect(readdirSync(back).sort()).toEqual(readdirSync(dir).sort());
    for (const f of readdirSync(dir)) expect(readFileSync(join(back, f), 'utf8'), f).toBe(readFileSync(join(dir, f), 'utf8'));

    writeFileSync(join(dir, 'welcome.json'), JSON.stringify({ subject: 'Hello {{name}}' }));
    const again = await gatepost(['--json', 'templates', 'push', dir, '--slug', 'welcome'], liveEnv);
    expect(json(again.stdout)).toEqual([{ slug: 'welcome', action: 'updated', id: expect.stringMatching(/^tpl_/) }]);

    const sent = json(
      (
        await gatepost(
          ['--json', 'send', '--to', 'c@example.com', '--template', 'welcome', '--data', '{"name":"Cy"}'],
          sandboxEnv,
        )
      ).stdout,
    );
    const message = json((await gatepost(['--json', 'messages', 'get', sent.id], sandboxEnv)).stdout);
    expect(message.subject).toBe('Hello Cy');
  });

  it('refuses a folder without the files it needs, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatepost-templates-'));
    writeFileSync(join(dir, 'lonely.html'), '<p>x</p>');
    expect(await gatepost(['templates', 'push', dir], liveEnv)).toMatchObject({
      code: 2,
      stderr: 'gatepost: lonely.html has no lonely.json (it gives the subject)\n',
    });
  });
});

describe('suppressions and webhooks', () => {
  it('adds, lists and removes a suppression', async () => {
    expect((await gatepost(['suppressions', 'add', 'gone@example.com', '--detail', 'asked'], liveEnv)).stdout).toBe(
      'suppressed gone@example.com (manual)\n',
    );
    await eventually(async () => (await gatepost(['suppressions', 'list'], liveEnv)).stdout.includes('gone@example.com'));
    const listed = json((await gatepost(['--json', 'suppressions', 'list'], liveEnv)).stdout);
    expect(listed).toEqual([expect.objectContaining({ address: 'gone@example.com', reason: 'manual', detail: 'asked' })]);
    expect((await gatepost(['suppressions', 'remove', 'gone@example.com'], liveEnv)).code).toBe(0);
    expect((await gatepost(['suppressions', 'remove', 'gone@example.com'], liveEnv)).code).toBe(1);
  });

  it('creates an endpoint (printing its secret once), lists and deletes it', async () => {
    const made = await gatepost(
      ['--json', 'webhooks', 'create', 'http://127.0.0.1:9/hook', '--event', 'email.sent,email.bounced'],
      liveEnv,
    );
    expect(made.code).toBe(0);
    const w = json(made.stdout);
    expect(w).toMatchObject({ events: ['email.sent', 'email.bounced'], secret: expect.stringMatching(/^whsec_/) });
    expect((await gatepost(['webhooks', 'list'], liveEnv)).stdout).toContain(
      `${w.id}  true     email.sent,email.bounced  http://127.0.0.1:9/hook`,
    );
    expect((await gatepost(['webhooks', 'delete', w.id], liveEnv)).stdout).toBe(`deleted ${w.id}\n`);
    expect(json((await gatepost(['--json', 'webhooks', 'list'], liveEnv)).stdout)).toEqual([]);
  });
});

describe('broadcasts and automations', () => {
  it('drafts a broadcast from a template to an audience, sends it into the sandbox inbox, lists and reads it; schedules and cancels another', async () => {
    const api = new Gatepost({ apiKey: tenant.live, baseUrl: gp.url });
    await api.templates.create({ slug: 'cli-news', subject: 'News for {{name}}', html: '<p>Hi {{name}}</p>' });
    const audience = await api.audiences.create('CLI readers');
    await api.audiences.importContacts(audience.id, 'email,name\nann.cli@example.com,Ann\nbob.cli@example.com,Bob\n');
    const create = ['broadcasts', 'create', '--name', 'News', '--audience', audience.id, '--from', 'News <news@shop.example>'];

    const made = await gatepost(['--json', ...create, '--template', 'cli-news', '--sandbox'], liveEnv);
    expect(made.code, made.stderr).toBe(0);
    const draft = json(made.stdout);
    expect(draft).toMatchObject({ id: expect.stringMatching(/^bro_/), status: 'draft', template: 'cli-news', sandbox: true });
    expect((await gatepost(['broadcasts', 'send', draft.id], liveEnv)).stdout).toMatch(
      new RegExp(`^${draft.id}  (sending|sent)  News\n`),
    );
    const sent = await eventually(async () => {
      const b = json((await gatepost(['--json', 'broadcasts', 'get', draft.id], liveEnv)).stdout);
      return b.status === 'sent' && b.results?.sent === 2 && b;
    });
    expect(sent.progress).toMatchObject({ admitted: 2 });
    expect((await gatepost(['broadcasts', 'get', draft.id], liveEnv)).stdout).toContain(
      'progress: 2 admitted; refused 0 suppressed, 0 unsubscribed, 0 other\n',
    );
    const inbox = (await gatepost(['inbox', 'list', '--limit', '50'], sandboxEnv)).stdout;
    expect(inbox).toContain('News for Ann');
    expect(inbox).toContain('News for Bob');
    expect((await gatepost(['broadcasts', 'list'], liveEnv)).stdout).toMatch(new RegExp(`^${draft.id}\\s+sent\\s`, 'm'));

    const again = await gatepost(['broadcasts', 'send', draft.id], liveEnv);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/^gatepost: broadcast_already_sent: /) });
    const neither = await gatepost([...create], liveEnv);
    expect(neither).toMatchObject({ code: 2, stderr: 'gatepost: give --template <slug> or --html <file>, one of the two\n' });

    const dir = mkdtempSync(join(tmpdir(), 'gatepost-cli-broadcast-'));
    writeFileSync(join(dir, 'news.html'), '<p>Later, {{name}}</p>');
    const later = json(
      (await gatepost(['--json', ...create, '--html', join(dir, 'news.html'), '--subject', 'Later', '--sandbox'], liveEnv))
        .stdout,
    );
    expect(later).toMatchObject({ html: '<p>Later, {{name}}</p>', subject: 'Later' });
    const at = new Date(Date.now() + 3_600_000).toISOString();
    expect(json((await gatepost(['--json', 'broadcasts', 'send', later.id, '--at', at], liveEnv)).stdout)).toMatchObject({
      status: 'scheduled',
      send_at: at,
    });
    expect((await gatepost(['broadcasts', 'cancel', later.id], liveEnv)).stdout).toMatch(new RegExp(`^${later.id}  cancelled`));
  });

  it('lists an automation, shows its steps, its runs and a run’s timeline', async () => {
    const api = new Gatepost({ apiKey: tenant.live, baseUrl: gp.url });
    await api.templates.create({ slug: 'cli-upgrade', subject: 'On {{plan}}', html: '<p>{{plan}}</p>' });
    const audience = await api.audiences.create('CLI customers');
    await api.audiences.addContact(audience.id, { email: 'eve.cli@example.com', name: 'Eve' });
    const automation = await api.automations.create({
      name: 'Upgrades',
      audience_id: audience.id,
      trigger: { type: 'custom_event', name: 'cli.upgraded' },
      steps: [{ id: 'hello', type: 'send', template: 'cli-upgrade', from: 'Shop <hi@shop.example>' }],
      sandbox: true,
    });
    const { runs } = await api.events.post({ name: 'cli.upgraded', email: 'eve.cli@example.com', data: { plan: 'pro' } });

    expect((await gatepost(['automations', 'list'], liveEnv)).stdout).toMatch(
      new RegExp(`^${automation.id}\\s+enabled\\s+custom_event cli.upgraded\\s+Upgrades$`, 'm'),
    );
    const shown = await gatepost(['automations', 'get', automation.id], liveEnv);
    expect(shown.stdout).toContain('trigger:  custom_event cli.upgraded\n');
    expect(shown.stdout).toMatch(/^hello\s+send\s+template cli-upgrade from Shop <hi@shop.example>$/m);
    const listed = await eventually(async () => {
      const page = json((await gatepost(['--json', 'automations', 'runs', automation.id], liveEnv)).stdout);
      return page.length === 1 && page[0].status === 'completed' && page;
    });
    expect(listed[0]).toMatchObject({ id: runs[0], email: 'eve.cli@example.com' });
    const run = await gatepost(['automations', 'run', automation.id, runs[0]!], liveEnv);
    expect(run.stdout).toMatch(new RegExp(`^${runs[0]}  completed  eve.cli@example.com\n`));
    expect(run.stdout).toMatch(/\sstep\.sent\s+hello\s+\{"message_id":"msg_/);
    const unknown = await gatepost(['--json', 'automations', 'get', 'aut_nope'], liveEnv);
    expect(unknown.code).toBe(1);
    expect(json(unknown.stderr)).toMatchObject({ error: { code: 'not_found', status: 404 } });
  });
});

describe('a sending domain and a delivery receipt', () => {
  it('creates a domain, shows the records to publish, verifies it once published, and verifies a live send’s receipt', async () => {
    const created = await gatepost(['--json', 'domains', 'create', 'sender.example'], liveEnv);
    expect(created.code).toBe(0);
    const domain = json(created.stdout);
    const shown = await gatepost(['domains', 'show', domain.id], liveEnv);
    for (const r of domain.records) expect(shown.stdout).toContain(r.name);
    expect(shown.stdout).toMatch(/dkim +TXT/);

    const before = json((await gatepost(['--json', 'domains', 'verify', domain.id], liveEnv)).stdout);
    expect(before.status).toBe('pending');
    publish(dns, domain.records);
    const verified = await gatepost(['domains', 'verify', domain.id], liveEnv);
    expect(verified.stdout).toContain(`${domain.id}  sender.example  verified`);
    expect((await gatepost(['domains', 'list'], liveEnv)).stdout).toMatch(new RegExp(`${domain.id} +sender.example +verified`));

    const sent = json(
      (
        await gatepost(
          [
            '--json',
            'send',
            '--from',
            'App <app@sender.example>',
            '--to',
            'r@accept.test',
            '--subject',
            'R',
            '--html',
            '<p>r</p>',
          ],
          liveEnv,
        )
      ).stdout,
    );
    await eventually(
      async () => json((await gatepost(['--json', 'messages', 'get', sent.id], liveEnv)).stdout).status === 'sent',
      30_000,
    );
    const receipt = await gatepost(['receipt', 'verify', sent.id], liveEnv);
    expect(receipt.code).toBe(0);
    expect(receipt.stdout).toMatch(new RegExp(`^verified rcp_\\w+ \\(seq 1\\) for ${sent.id}\n`));
    expect(receipt.stdout).toContain('dkim:     d=sender.example');
    const claims = json((await gatepost(['--json', 'receipt', 'verify', sent.id], liveEnv)).stdout);
    expect(claims).toMatchObject({ verified: true, claims: { message_id: sent.id, envelope: { to: 'r@accept.test' } } });
  });

  it('fails to verify a receipt a message does not have yet, exit 1', async () => {
    const sent = json(
      (await gatepost(['--json', 'send', '--to', 'n@example.com', '--subject', 'N', '--html', 'n'], sandboxEnv)).stdout,
    );
    const res = await gatepost(['receipt', 'verify', sent.id], sandboxEnv);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^gatepost: receipt_not_found: /);
  });
});
